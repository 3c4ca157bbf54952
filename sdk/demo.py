"""``sng demo``: a whole tournament on the running stack, played by the built-in bots.

It creates a tournament, credits and registers N bots, pays their entries, lets them play
through the HTTP client (a live progress line while they do) and reports the final standings
and payouts. With ``humans`` > 0 it leaves that many seats for people: it prints the
tournament's page at ``/play`` and waits for them to register and pay there (the tournament
starts when the last seat is paid), with a decision timer long enough for a person.

With ``entrants`` above ``seats`` it is a multi-table tournament (docs/mtt.md) of that many
bots on tables of ``seats``. With ``late_seconds`` a fifth of them register only once play has
started, during late registration, and with ``re_entries`` a bot that busts while it is open
enters again (a new entry, the fee paid again) up to that many times.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from typing import Any

from rich.console import Console

from core.settings import Settings
from core.tokens import mint_player_token
from sdk.advisor import run_advisor
from sdk.bots import POLICIES, run_bot
from sdk.client import SngClient, SngError

DONE = {"closed", "cancelled"}


HUMAN_DECISION_SECONDS = 30

START_MARGIN_SECONDS = 5.0
"""How long after creating a late-registration MTT it is scheduled to start, plus
``SECONDS_PER_ENTRY`` for each bot that registers before the start."""
SECONDS_PER_ENTRY = 0.5


def demo_settings(
    seats: int,
    *,
    entry_fee: int,
    stack: int,
    level_seconds: int,
    humans: int = 0,
    small_blind: int | None = None,
) -> dict[str, Any]:
    return {
        "seats": seats,
        "entryFee": entry_fee,
        "startingStack": stack,
        "actionTimeoutSeconds": HUMAN_DECISION_SECONDS if humans else 10,
        "blindStructure": {
            "startingSmallBlind": small_blind or max(1, stack // 100),
            "increaseFactor": 1.5,
            "levelDurationSeconds": level_seconds,
        },
    }


def mtt_demo_settings(
    entrants: int, *, late_seconds: int, re_entries: int, early: int, now_ms: int
) -> dict[str, Any]:
    """The field of a multi-table demo: ``entrants`` bots, every re-entry counted in
    ``maxEntrants``; with late registration it starts at a scheduled time with the ``early``
    ones (or fewer, if they are slow to pay: any two make a field) and the rest come late."""
    field: dict[str, Any] = {"maxEntrants": entrants * (1 + re_entries)}
    if late_seconds:
        field |= {
            "minEntrants": 2,
            "scheduledStartAt": now_ms
            + int((START_MARGIN_SECONDS + SECONDS_PER_ENTRY * early) * 1000),
            "lateRegistrationSeconds": late_seconds,
            "maxReEntries": re_entries,
        }
    return field


async def run_demo(
    api_url: str,
    settings: Settings,
    *,
    seats: int,
    bots: list[str] | None = None,
    entry_fee: int = 100,
    stack: int = 1500,
    level_seconds: int = 30,
    humans: int = 0,
    copilot: list[str] | None = None,
    small_blind: int | None = None,
    console: Console | None = None,
    entrants: int | None = None,
    late_seconds: int = 0,
    re_entries: int = 0,
) -> dict[str, Any]:
    """``seats`` seats in all; ``humans`` of them are left for people to take at ``/play``.
    ``entrants`` above ``seats``: a multi-table tournament of that many bots on tables of
    ``seats`` (no humans), with late registration for ``late_seconds`` and up to
    ``re_entries`` re-entries per bot (``late_seconds`` needed).

    ``copilot``: a CoPilot tournament (seed 000), with the people's user ids. Each of them gets
    an advisor agent of their own, advised by the bundled advisor (``sdk.advisor``) once play
    starts; they choose it when they register at ``/play``. Each bot names an advisor of its
    own too (a CoPilot registration needs one), which gives no advice: the bots decide alone."""
    if not 0 <= humans < seats:
        raise ValueError("humans must leave at least one seat to a bot")
    mtt = entrants is not None and entrants > seats
    if (late_seconds or re_entries) and not mtt:
        raise ValueError("late registration and re-entry need entrants above seats (an MTT)")
    if re_entries and not late_seconds:
        raise ValueError("re-entries need late registration (late_seconds)")
    if mtt and (humans or copilot is not None):
        raise ValueError("a multi-table demo is played by bots only")
    if copilot is not None and len(copilot) != humans:
        raise ValueError("a CoPilot demo names each person who will play (one per human seat)")
    run = secrets.token_hex(3)
    size = entrants if mtt and entrants is not None else seats - humans
    kinds = bots or [list(POLICIES)[i % len(POLICIES)] for i in range(size)]
    names = [f"bot-{kind}-{i}-{run}" for i, kind in enumerate(kinds)]
    # The bots that register late: a fifth of the field, the last ones.
    early = len(names) - (len(names) // 5 if late_seconds else 0)
    async with SngClient(api_url, service_key=settings.key("admin")) as operator:
        tid = await operator.create_tournament(
            f"demo {run}",
            demo_settings(
                seats,
                entry_fee=entry_fee,
                stack=stack,
                level_seconds=level_seconds,
                humans=humans,
                small_blind=small_blind,
            )
            | ({"kind": "copilot"} if copilot is not None else {})
            | (
                mtt_demo_settings(
                    len(names),
                    late_seconds=late_seconds,
                    re_entries=re_entries,
                    early=early,
                    now_ms=int(time.time() * 1000),
                )
                if mtt
                else {}
            ),
            hand_pause_ms=300,
        )
        for name in names:
            # Every entry a bot may make (its re-entries too), credited once.
            await operator.credit(name, entry_fee * (1 + re_entries), f"demo-{name}")
        bot_advisors = [
            await operator.create_agent(name, f"{name}'s advisor") if copilot is not None else None
            for name in names
        ]
        people_advisors = [
            await operator.create_agent(person, f"CoPilot for {person} ({run})")
            for person in copilot or []
        ]
    players = [SngClient(api_url, token=mint_player_token(settings, name)) for name in names]
    advising: list[asyncio.Task[None]] = []
    tasks: list[asyncio.Task[None]] = []
    try:
        entered = []
        for client, advisor in zip(players[:early], bot_advisors[:early], strict=True):
            if late_seconds:
                # Registering may outlast the scheduled start: the rest then enter late.
                entered.append(await _enter(client, tid, entry_fee))
                continue
            await client.register(tid, advisor["agentId"] if advisor else None)
            await client.pay(tid, entry_fee)
            entered.append(True)
        if humans:
            for person, advisor in zip(copilot or [], people_advisors, strict=True):
                print(
                    f"{person}: sign in as {person!r} and register with your advisor"
                    f" {advisor['name']!r} ({advisor['agentId']})",
                    file=sys.stderr,
                    flush=True,
                )
            await _wait_for_people(players[0], tid, api_url, humans, console)
        advising = [
            asyncio.create_task(run_advisor(api_url, advisor["key"], tid))
            for advisor in people_advisors
        ]
        tasks += [
            asyncio.create_task(
                _play(client, tid, POLICIES[kind], seed=i, entry_fee=entry_fee, again=re_entries)
            )
            for i, (client, kind) in enumerate(zip(players[:early], kinds[:early], strict=True))
            if entered[i]
        ]
        if early < len(players):
            tasks.append(
                asyncio.create_task(
                    _late(
                        players[early:],
                        kinds[early:],
                        tid,
                        entry_fee=entry_fee,
                        again=re_entries,
                        within=late_seconds / 2,
                    )
                )
            )
        final = await _follow(players[0], tid, console)
    finally:
        # The bots stop before their clients close (also when the demo fails midway).
        for task in (*tasks, *advising):
            task.cancel()
        await asyncio.gather(*tasks, *advising, return_exceptions=True)
        for client in players:
            await client.aclose()
    return {
        "tournament_id": tid,
        "state": final["state"],
        "standings": [
            {"position": f["rank"], "player": f["playerId"], "elimination_order": f["place"]}
            for f in final["standings"]
        ],
        "payouts": [
            {"position": p["position"], "player": p["playerId"], "amount": p["amount"]}
            for p in final["payouts"]
        ],
        "field_size": final.get("fieldSize") or len(final["standings"]),
        "entry_fees_total": final["entryFeesTotal"],
        "rake_total": final["rakeTotal"],
    }


LATE_RETRY = {"tournament_not_registered", "tournament_not_in_registration"}
"""What an entry meets around a late-registration MTT's start: its unpaid reserve released by
the start, or registration paused for the start's few seconds (``starting``)."""


async def _enter(client: SngClient, tid: str, entry_fee: int, attempts: int = 20) -> bool:
    """Register and pay into an MTT whose late registration is (or is about to be) open;
    False once it has closed."""
    for _ in range(attempts):
        try:
            await client.register(tid)
            await client.pay(tid, entry_fee)
            return True
        except SngError as err:
            if err.code not in LATE_RETRY:
                raise
            state = (await client.tournament(tid))["state"]
            if state not in ("registering", "starting", "playing"):
                return False
        await asyncio.sleep(0.5)
    return False


async def _play(
    client: SngClient, tid: str, policy: Any, *, seed: int, entry_fee: int, again: int
) -> None:
    """One bot's tournament, its first entry paid: play until it busts or play ends; while
    re-entries are left, enter again after a bust (refused once late registration has
    closed or the tournament ended: then it is out for good)."""
    await run_bot(client, tid, policy, seed=seed, until_eliminated=True)
    for entry in range(1, again + 1):
        try:
            await client.register(tid)
            await client.pay(tid, entry_fee)
        except SngError:
            return  # late registration closed (or the tournament ended): out for good
        await run_bot(client, tid, policy, seed=seed * 100 + entry, until_eliminated=True)


async def _late(
    clients: list[SngClient],
    kinds: list[str],
    tid: str,
    *,
    entry_fee: int,
    again: int,
    within: float,
) -> None:
    """The late entrants: once play has started, one by one over the first ``within``
    seconds of late registration, each then playing as the others do."""
    while True:  # polled over HTTP: there is nothing local to wait on
        if (await clients[0].tournament(tid))["state"] not in ("registering", "starting"):
            break
        await asyncio.sleep(0.5)
    plays: list[asyncio.Task[None]] = []
    try:
        for i, (client, kind) in enumerate(zip(clients, kinds, strict=True)):
            await asyncio.sleep(within / len(clients))
            if not await _enter(client, tid, entry_fee):
                continue  # the window closed early (the tournament ended): not entered
            plays.append(
                asyncio.create_task(
                    _play(
                        client,
                        tid,
                        POLICIES[kind],
                        seed=1000 + i,
                        entry_fee=entry_fee,
                        again=again,
                    )
                )
            )
        await asyncio.gather(*plays)
    finally:
        for task in plays:
            task.cancel()


def play_url(api_url: str, tid: str) -> str:
    return f"{api_url.rstrip('/')}/play/tournaments/{tid}"


async def _wait_for_people(
    client: SngClient, tid: str, api_url: str, humans: int, console: Console | None
) -> None:
    """Until the people have taken their seats (the tournament leaves registering when its
    last seat is paid)."""
    who = "a person" if humans == 1 else f"{humans} people"
    # Said even under --json (on stderr): without it nobody knows where to go.
    print(
        f"waiting for {who} at {play_url(api_url, tid)} (sign in, register and pay there)",
        file=sys.stderr,
        flush=True,
    )
    while True:
        view = await client.tournament(tid)
        if view["state"] != "registering":
            return
        await asyncio.sleep(1.0)


async def _follow(client: SngClient, tid: str, console: Console | None) -> dict[str, Any]:
    while True:
        view = await client.tournament(tid)
        if console is not None:
            alive = sum(1 for chips in view["stacks"].values() if chips > 0)
            console.print(
                f"  {view['state']:<9} level {view['currentLevel']:<3}"
                f" hands {view['handsPlayed']:<5} players left {alive or view['registeredCount']}",
                end="\r",
            )
        if view["state"] in DONE:
            if console is not None:
                console.print()
            return view
        await asyncio.sleep(0.5)
