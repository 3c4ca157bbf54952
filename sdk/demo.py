"""``sng demo``: a whole tournament on the running stack, played by the built-in bots.

It creates a tournament, credits and registers N bots, pays their entries, lets them play
through the HTTP client (a live progress line while they do) and reports the final standings
and payouts. With ``humans`` > 0 it leaves that many seats for people: it prints the
tournament's page at ``/play`` and waits for them to register and pay there (the tournament
starts when the last seat is paid), with a decision timer long enough for a person.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
from typing import Any

from rich.console import Console

from core.settings import Settings
from core.tokens import mint_player_token
from sdk.advisor import run_advisor
from sdk.bots import POLICIES, run_bot
from sdk.client import SngClient

DONE = {"closed", "cancelled"}


HUMAN_DECISION_SECONDS = 30


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
) -> dict[str, Any]:
    """``seats`` seats in all; ``humans`` of them are left for people to take at ``/play``.

    ``copilot``: a CoPilot tournament (seed 000), with the people's user ids. Each of them gets
    an advisor agent of their own, advised by the bundled advisor (``sdk.advisor``) once play
    starts; they choose it when they register at ``/play``. Each bot names an advisor of its
    own too (a CoPilot registration needs one), which gives no advice: the bots decide alone."""
    if not 0 <= humans < seats:
        raise ValueError("humans must leave at least one seat to a bot")
    if copilot is not None and len(copilot) != humans:
        raise ValueError("a CoPilot demo names each person who will play (one per human seat)")
    run = secrets.token_hex(3)
    kinds = bots or [list(POLICIES)[i % len(POLICIES)] for i in range(seats - humans)]
    names = [f"bot-{kind}-{i}-{run}" for i, kind in enumerate(kinds)]
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
            | ({"kind": "copilot"} if copilot is not None else {}),
            hand_pause_ms=300,
        )
        for name in names:
            await operator.credit(name, entry_fee, f"demo-{name}")
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
    try:
        for client, advisor in zip(players, bot_advisors, strict=True):
            await client.register(tid, advisor["agentId"] if advisor else None)
            await client.pay(tid, entry_fee)
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
        tasks = [
            asyncio.create_task(run_bot(client, tid, POLICIES[kind], seed=i))
            for i, (client, kind) in enumerate(zip(players, kinds, strict=True))
        ]
        final = await _follow(players[0], tid, console)
        for task in (*tasks, *advising):
            task.cancel()
        await asyncio.gather(*tasks, *advising, return_exceptions=True)
    finally:
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
        "entry_fees_total": final["entryFeesTotal"],
        "rake_total": final["rakeTotal"],
    }


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
