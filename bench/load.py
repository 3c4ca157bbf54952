"""``sng bench``'s load phases: the bare-Update baseline, bot tournaments and game-state pollers.

Every phase is bounded twice, by a count and by a clock, so it always ends by itself. The bots
here are "instant": they answer the moment the API says it is their turn, so what is measured
is the service, not a thinking player.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import secrets
import statistics
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

from bench.cpu import CpuMeter, CpuSample
from bench.echo import UPDATES_PER_RUN, EchoWorkflow
from core.settings import Settings
from core.tokens import mint_player_token
from sdk.bots import FINAL_STATES, Policy, random_bot
from sdk.client import SngClient, SngError
from sdk.demo import demo_settings

SEATS = 6
ENTRY_FEE = 10
BASELINE_WARMUP = 10


@dataclass
class Target:
    """Where the load goes: the API's URL, the settings its tokens and keys come from, and a
    Temporal client on the same server (for the baseline and the histories)."""

    api_url: str
    settings: Settings
    client: Client


def percentiles(seconds: list[float]) -> dict[str, float]:
    """p50/p95/p99 and mean in milliseconds (all zero without samples)."""
    if not seconds:
        return {"count": 0, "p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0, "mean_ms": 0.0}
    ms = sorted(s * 1000 for s in seconds)
    cuts = statistics.quantiles(ms, n=100, method="inclusive") if len(ms) > 1 else [ms[0]] * 99
    return {
        "count": len(ms),
        "p50_ms": round(cuts[49], 3),
        "p95_ms": round(cuts[94], 3),
        "p99_ms": round(cuts[98], 3),
        "mean_ms": round(statistics.fmean(ms), 3),
    }


# -- 1. the baseline ---------------------------------------------------------------------------
async def baseline(client: Client, *, updates: int, deadline_s: float) -> dict[str, Any]:
    """N sequential no-op Updates to one trivial workflow, with its worker in this process."""
    task_queue = f"bench-echo-{uuid.uuid4().hex[:8]}"
    samples: list[float] = []
    stop_at = time.monotonic() + deadline_s
    async with Worker(client, task_queue=task_queue, workflows=[EchoWorkflow]):
        wanted, run = updates + BASELINE_WARMUP, 0
        while len(samples) < wanted and time.monotonic() < stop_at:
            handle = await client.start_workflow(
                EchoWorkflow.run, id=f"{task_queue}-{run}", task_queue=task_queue
            )
            run += 1
            for n in range(min(UPDATES_PER_RUN, wanted - len(samples))):
                if time.monotonic() >= stop_at:
                    break
                started = time.perf_counter()
                await handle.execute_update(EchoWorkflow.touch, n)
                samples.append(time.perf_counter() - started)
            await handle.signal(EchoWorkflow.finish)
            await handle.result()
    measured = samples[BASELINE_WARMUP:] or samples
    result = percentiles(measured)
    result["updates_per_s"] = round(len(measured) / sum(measured), 1) if measured else 0.0
    return result


async def ceiling(
    client: Client, *, workflows: int, seconds: float, meter: CpuMeter | None = None
) -> dict[str, Any]:
    """The bare-Update ceiling at ``workflows`` tables' shape: that many trivial workflows,
    each sent no-op Updates one after another (a table takes one action at a time) by its own
    lane, all at once for ``seconds``; Updates/s over the window, their latency, and the CPU
    each Update cost the watched processes (the baseline's worker runs in the bench's own
    process, as in the sequential baseline)."""
    task_queue = f"bench-ceiling-{uuid.uuid4().hex[:8]}"
    samples: list[float] = []
    async with Worker(client, task_queue=task_queue, workflows=[EchoWorkflow]):
        handles = [
            await client.start_workflow(
                EchoWorkflow.run, id=f"{task_queue}-{n}", task_queue=task_queue
            )
            for n in range(workflows)
        ]
        for handle in handles:  # warm: each workflow's first task is behind us
            await handle.execute_update(EchoWorkflow.touch, -1)
        stop_at = time.monotonic() + seconds

        async def lane(handle: Any) -> None:
            for n in range(UPDATES_PER_RUN - 10):
                if time.monotonic() >= stop_at:
                    return
                started = time.perf_counter()
                await handle.execute_update(EchoWorkflow.touch, n)
                samples.append(time.perf_counter() - started)

        before = meter.sample() if meter else None
        began = time.monotonic()
        await asyncio.gather(*(lane(h) for h in handles))
        elapsed = time.monotonic() - began
        after = meter.sample() if meter else None
        for handle in handles:
            await handle.signal(EchoWorkflow.finish)
        for handle in handles:
            await handle.result()
    result: dict[str, Any] = {
        "workflows": workflows,
        "seconds": round(elapsed, 2),
        "updates": len(samples),
        "updates_per_s": round(len(samples) / elapsed, 1) if elapsed else 0.0,
        **percentiles(samples),
    }
    if before and after:
        result["cpu"] = CpuMeter.window(before, after, len(samples))
    return result


# -- 2 and 3. bot tournaments ------------------------------------------------------------------
@dataclass
class Recorder:
    """What the bots saw, stamped with the monotonic clock."""

    acts: list[tuple[float, float]] = field(default_factory=list)  # (finished at, seconds)
    refused: int = 0
    hands_seen: dict[str, dict[int, float]] = field(default_factory=lambda: defaultdict(dict))
    finished: list[dict[str, Any]] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    create_until: float = float("inf")
    """No new tournament after this (set once the measured window is fixed)."""
    turns: list[tuple[float, float, bool]] = field(default_factory=list)
    """(arrived at, seconds since the action that caused it was sent, same hand as it)"""
    _turns: dict[str, TurnTracker] = field(default_factory=dict)

    def tracker(self, tid: str) -> TurnTracker:
        return self._turns.setdefault(tid, TurnTracker(self.turns))


@dataclass
class TurnTracker:
    """Turn latency at one table, as issue 30 defines it: from an action being sent to the
    next player learning it is their turn. A turn is a (hand, turn) pair; it is timed from
    the first send of the action before it (a repeated send of the same turn, refused as
    stale, does not restart the clock), and only its first arrival counts."""

    samples: list[tuple[float, float, bool]]
    seen: set[tuple[int, int]] = field(default_factory=set)
    cause: tuple[float, int, int] | None = None
    """(sent at, hand, turn) of the latest action sent"""

    def sent(self, hand: int, turn: int) -> None:
        if self.cause is None or self.cause[1:] != (hand, turn):
            self.cause = (time.monotonic(), hand, turn)

    def arrived(self, hand: int, turn: int) -> bool:
        """Record a turn shown to its player; False when it was seen already."""
        if (hand, turn) in self.seen:
            return False
        self.seen.add((hand, turn))
        now = time.monotonic()
        if self.cause is not None and self.cause[1:] != (hand, turn):
            self.samples.append((now, now - self.cause[0], self.cause[1] == hand))
        return True


def calling_station(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    """Never raises, never folds: a slow, long-lived table for the polling phase."""
    actions = state["legalActions"]["actions"]
    for kind in ("check", "call", "all_in", "fold"):
        if kind in actions:
            return kind, None
    return actions[0], None


LASTING_STACK = 100_000
"""The load curve's starting stack: 5,000 big blinds at the first level."""


def lasting_bot(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
    """Random play that keeps a table dealing: any legal action but all-in, raises at the
    minimum. The load curve measures tables in play with it (and ``LASTING_STACK``): with
    ``random_bot`` at 1,500 chips a table busted in about 6.5 hands (13 s), so at 8 tables
    most of the stack's work in a window was registrations, seals and settlements, not play
    (docs/capacity.md, "Issue 30: the act path after the merge")."""
    legal = state["legalActions"]
    actions = [a for a in legal["actions"] if a != "all_in"] or legal["actions"]
    action = rng.choice(actions)
    if action == "raise":
        return action, legal["minRaiseTo"]
    return action, None


async def _bot(client: SngClient, tid: str, policy: Policy, rec: Recorder, *, seed: int) -> None:
    """Play until the tournament is over or this bot busts (cancelled by the phase's clock)."""
    rng = random.Random(seed)
    version: int | None = None
    while True:
        try:
            state = await client.game_state(tid, wait_for_change=version, wait_seconds=5)
        except (SngError, httpx.HTTPError) as err:
            if isinstance(err, SngError) and err.status < 500:
                raise
            await asyncio.sleep(0.2)
            continue
        version = state["version"]
        if state.get("tournament", {}).get("state") in FINAL_STATES:
            return
        if state.get("handNumber"):
            rec.hands_seen[tid].setdefault(state["handNumber"], time.monotonic())
        legal = state.get("legalActions")
        if not legal:
            continue
        turns = rec.tracker(tid)
        turns.arrived(state["handNumber"], state["turn"])  # a long-poll's wake
        action, amount = policy(state, rng)
        turns.sent(state["handNumber"], state["turn"])
        started = time.perf_counter()
        try:
            await client.act(
                tid,
                hand_number=state["handNumber"],
                turn=state["turn"],
                action=action,
                amount=amount,
            )
        except SngError as err:
            if err.code not in {"stale_turn", "not_your_turn"}:
                raise
            rec.refused += 1
            continue
        rec.acts.append((time.monotonic(), time.perf_counter() - started))


@dataclass
class Tournament:
    tid: str
    players: list[SngClient]
    started: float = field(default_factory=time.monotonic)

    async def close(self) -> None:
        for client in self.players:
            await client.aclose()


async def open_tournament(target: Target, operator: SngClient, *, stack: int = 1500) -> Tournament:
    """Create a 6-max tournament with no pause between hands, then fund, register and pay 6."""
    run = secrets.token_hex(4)
    tid = await operator.create_tournament(
        f"bench {run}",
        demo_settings(SEATS, entry_fee=ENTRY_FEE, stack=stack, level_seconds=30),
        hand_pause_ms=0,
    )
    names = [f"bench-{run}-{seat}" for seat in range(SEATS)]
    for name in names:
        await operator.credit(name, ENTRY_FEE, f"bench-{name}")
    players = [
        SngClient(target.api_url, token=mint_player_token(target.settings, name)) for name in names
    ]
    for client in players:
        await client.register(tid)
        await client.pay(tid, ENTRY_FEE)
    return Tournament(tid, players)


async def _play(
    target: Target, operator: SngClient, rec: Recorder, policy: Policy, stack: int
) -> None:
    """One tournament start to finish (cancellation leaves it to the caller to force-end)."""
    tournament = await open_tournament(target, operator, stack=stack)
    try:
        bots = [
            asyncio.create_task(_bot(c, tournament.tid, policy, rec, seed=i))
            for i, c in enumerate(tournament.players)
        ]
        try:
            await asyncio.gather(*bots)
        except asyncio.CancelledError:
            rec.unfinished.append(tournament.tid)
            raise
        finally:
            for task in bots:
                task.cancel()
            await asyncio.gather(*bots, return_exceptions=True)
        rec.finished.append(
            {"tid": tournament.tid, "seconds": time.monotonic() - tournament.started}
        )
    finally:
        await tournament.close()


async def _slot(
    target: Target, operator: SngClient, rec: Recorder, policy: Policy, stack: int
) -> None:
    """Keep one tournament running: when it ends, open the next (until the window closes)."""
    while time.monotonic() < rec.create_until:
        await _play(target, operator, rec, policy, stack)


async def whole_tournaments(
    target: Target, operator: SngClient, count: int, *, timeout_s: float
) -> list[dict[str, Any]]:
    """``count`` short tournaments of random play (``random_bot``, 1,500 chips) played to
    their end, for the history section's whole hands when the load curve's lasting tables were
    force-ended; one still running after ``timeout_s`` is force-ended and not returned."""
    rec = Recorder()
    plays = [
        asyncio.create_task(_play(target, operator, rec, random_bot, 1500)) for _ in range(count)
    ]
    _, pending = await asyncio.wait(plays, timeout=timeout_s)
    for task in pending:
        task.cancel()
    await asyncio.gather(*plays, return_exceptions=True)
    for tid in rec.unfinished:
        await end_tournament(operator, tid)
    return rec.finished


FORCE_END_REFUSED: list[str] = []
"""Tournaments the bench could not force-end (reported in the JSON): an abandoned tournament
keeps dealing on timeouts and loads every later section."""


async def end_tournament(operator: SngClient, tid: str) -> None:
    """Force-end a tournament the bench is done with; a refusal is written down, not hidden
    (a running stack may refuse it: ``SNG_FORCE_END_MIN_LEVEL_AGE_SECONDS``)."""
    for _ in range(20):
        try:
            await operator.force_end(tid)
            return
        except (SngError, httpx.HTTPError) as err:
            refusal = f"{tid}: {err}"
            state = None
            with contextlib.suppress(SngError, httpx.HTTPError):
                state = (await operator.tournament(tid)).get("state")
            if state in FINAL_STATES:
                return  # it ended by itself meanwhile
            if state != "starting":
                break
            await asyncio.sleep(0.5)  # full, about to deal: it can be force-ended once playing
    FORCE_END_REFUSED.append(refusal)


async def run_level(
    target: Target,
    operator: SngClient,
    *,
    concurrency: int,
    warmup_s: float,
    window_s: float,
    drain_s: float,
    meter: CpuMeter | None = None,
    churn: bool = False,
) -> tuple[dict[str, Any], Recorder]:
    """``concurrency`` tournaments kept running through a measured window; then up to
    ``drain_s`` for the last ones to finish by themselves; the rest are force-ended.

    The window opens once every table has dealt (registration and the start grace are not
    play), or after ``warmup_s`` at the latest. With a ``meter``, the watched processes' CPU
    is sampled at the window's two ends and divided by the actions accepted in it.

    The tables play ``lasting_bot`` at ``LASTING_STACK``; ``churn`` plays ``random_bot`` at
    1,500 chips instead (the definition before 2026-12-03's last run: short tournaments, so
    registrations and settlements weigh in every window)."""
    play = (random_bot, 1500) if churn else (lasting_bot, LASTING_STACK)
    rec = Recorder()
    slots = [asyncio.create_task(_slot(target, operator, rec, *play)) for _ in range(concurrency)]
    for _ in range(int(warmup_s * 10)):
        if len(rec.hands_seen) >= concurrency:
            break
        await asyncio.sleep(0.1)
    window_from = time.monotonic()
    window_to = rec.create_until = window_from + window_s
    cpu: list[CpuSample] = []

    async def sample_at_the_ends() -> None:
        if meter is not None:
            cpu.append(meter.sample())
            await asyncio.sleep(max(window_to - time.monotonic(), 0.0))
            cpu.append(meter.sample())

    sampler = asyncio.create_task(sample_at_the_ends())
    _, pending = await asyncio.wait(slots, timeout=window_s + drain_s)
    for task in pending:
        task.cancel()
    results = await asyncio.gather(*slots, return_exceptions=True)
    errors = [r for r in results if isinstance(r, Exception)]
    await sampler
    for tid in rec.unfinished:
        await end_tournament(operator, tid)
    in_window = [lat for at, lat in rec.acts if window_from <= at <= window_to]
    turns = [(lat, in_hand) for at, lat, in_hand in rec.turns if window_from <= at <= window_to]
    hands = sum(
        1
        for seen in rec.hands_seen.values()
        for at in seen.values()
        if window_from <= at <= window_to
    )
    figures: dict[str, Any] = {
        "concurrent_tournaments": concurrency,
        "window_s": window_s,
        "actions": len(in_window),
        "actions_per_s": round(len(in_window) / window_s, 2),
        "hands": hands,
        "hands_per_min": round(hands / window_s * 60, 1),
        "refused_acts": rec.refused,
        "tournaments_finished": len(rec.finished),
        "tournaments_force_ended": len(rec.unfinished),
        "errors": [repr(e) for e in errors[:3]],
        **{f"act_{k}": v for k, v in percentiles(in_window).items()},
        # The bots long-poll: act sent → the next player's long-poll wakes with its turn.
        **{f"turn_{k}": v for k, v in percentiles([lat for lat, _ in turns]).items()},
        "turn_in_hand_p50_ms": percentiles([lat for lat, same in turns if same])["p50_ms"],
        "turns_after_a_deal": sum(1 for _, same in turns if not same),
    }
    if len(cpu) == 2:
        # Accepted actions only: a refused act never appended to rec.acts.
        figures["cpu"] = CpuMeter.window(cpu[0], cpu[1], len(in_window))
    return figures, rec


# -- 5. polling --------------------------------------------------------------------------------
async def quiesce(api_url: str, *, max_s: float) -> float:
    """Wait until the API stops querying (its watchers idle out after 30 s unasked), so one
    phase's tables do not load the next; returns the seconds waited."""
    began = time.monotonic()
    last = await query_counter(api_url)
    while time.monotonic() - began < max_s:
        await asyncio.sleep(1.0)
        now = await query_counter(api_url)
        if now == last:
            break
        last = now
    return round(time.monotonic() - began, 1)


async def settle(client: Client, task_queue: str, *, max_s: float) -> float:
    """Wait until no tournament or table is running any more (force-ended ones settle their
    money and records for a while), so their work does not load what is measured next;
    returns the seconds waited."""
    began = time.monotonic()
    running = (
        'ExecutionStatus="Running"'
        ' AND WorkflowType IN ("TournamentWorkflow", "TableWorkflow", "RoomWorkflow")'
        f' AND TaskQueue="{task_queue}"'
    )
    while time.monotonic() - began < max_s:
        if (await client.count_workflows(running)).count == 0:
            break
        await asyncio.sleep(1.0)
    return round(time.monotonic() - began, 1)


async def query_counter(api_url: str) -> float:
    """The API's sng_api_workflow_queries_total, summed over its labels."""
    async with httpx.AsyncClient(base_url=api_url, timeout=10) as http:
        text = (await http.get("/metrics")).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("sng_api_workflow_queries_total{")
    )


async def poll_elsewhere(url: str, path: str, tokens: list[str], seconds: float) -> dict[str, Any]:
    """One poller process (bench/poll.py): ``tokens`` pollers on ``url``'s ``path``."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.poll",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    job = {"url": url, "path": path, "tokens": tokens, "seconds": seconds}
    out, _ = await proc.communicate(json.dumps(job).encode())
    if proc.returncode != 0:
        raise RuntimeError(f"the poller process exited with {proc.returncode}")
    result: dict[str, Any] = json.loads(out)
    return result


async def polling(
    target: Target,
    operator: SngClient,
    *,
    pollers: int,
    seconds: float,
    replicas: list[str] | None = None,
) -> dict[str, Any]:
    """Clients GET one playing table's game state as fast as answers come: one alone (the
    service time), then ``pollers`` each as a distinct spectator, then ``pollers`` as one
    viewer, then (with a second replica) ``pollers`` distinct spectators split over both; the
    query counters' delta says what the API asked of Temporal meanwhile. The pollers run in
    a process of their own, one per replica (bench/poll.py)."""
    rec = Recorder()
    tournament = await open_tournament(target, operator, stack=100_000)
    bots = [
        asyncio.create_task(_bot(c, tournament.tid, calling_station, rec, seed=i))
        for i, c in enumerate(tournament.players)
    ]
    path = f"/tournaments/{tournament.tid}/game-state"
    urls = [target.api_url, *(replicas or [])]
    out: dict[str, Any] = {"pollers": pollers, "seconds_each": seconds, "client": "aiohttp"}
    modes = [("one_poller", 1, 1), ("distinct_viewers", pollers, 1), ("one_viewer", pollers, 1)]
    if len(urls) > 1:
        modes.append(("two_replicas", pollers, 2))
    try:
        for _ in range(200):  # until the table is dealing (start grace is 3 s)
            if rec.hands_seen.get(tournament.tid):
                break
            await asyncio.sleep(0.1)
        for mode, count, spread in modes:
            tag = secrets.token_hex(3)
            tokens = [
                mint_player_token(
                    target.settings, f"watcher-{tag}-{0 if mode == 'one_viewer' else i}"
                )
                for i in range(count)
            ]
            before = sum([await query_counter(u) for u in urls[:spread]])
            results = await asyncio.gather(
                *(poll_elsewhere(urls[k], path, tokens[k::spread], seconds) for k in range(spread))
            )
            after = sum([await query_counter(u) for u in urls[:spread]])
            elapsed = max(r["elapsed"] for r in results)
            samples = [lat for r in results for lat in r["latencies"]]
            refused = sum(n for r in results for code, n in r["statuses"].items() if code != "200")
            out[mode] = {
                "requests_per_s": round(len(samples) / elapsed, 1),
                "temporal_queries_per_s": round((after - before) / elapsed, 2),
                "not_ok": refused,
                **percentiles(samples),
            }
    finally:
        for task in bots:
            task.cancel()
        await asyncio.gather(*bots, return_exceptions=True)
        await end_tournament(operator, tournament.tid)
        await tournament.close()
    return out


class _TurnClock:
    """From one player sending an action to the next player learning it is their turn (a
    ``TurnTracker``: each turn timed once, from the first send of the action before it). The
    window opens at the first turn that arrives (after the tournament's grace) and lasts
    ``seconds``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.samples: list[tuple[float, float, bool]] = []
        self.turns = TurnTracker(self.samples)
        self.sent = 0
        self.until = float("inf")
        self.rng = random.Random(7)

    def running(self) -> bool:
        return time.monotonic() < self.until

    def turn_arrived(self, turn: dict[str, Any]) -> bool:
        """A turn shown to its player (False: that turn was shown before)."""
        self.until = min(self.until, time.monotonic() + self.seconds)
        return self.turns.arrived(turn["handNumber"], turn["turn"])

    async def answer(self, client: SngClient, tid: str, turn: dict[str, Any]) -> None:
        """Call (or check) on the turn ``turn`` shows (its ``handNumber``, ``turn`` and
        ``legalActions``)."""
        action, amount = calling_station(turn, self.rng)
        self.turns.sent(turn["handNumber"], turn["turn"])
        self.sent += 1
        with contextlib.suppress(SngError):
            await client.act(
                tid, hand_number=turn["handNumber"], turn=turn["turn"], action=action, amount=amount
            )

    async def measure(
        self,
        operator: SngClient,
        tournament: Tournament,
        agent: Callable[[SngClient], Coroutine[Any, Any, None]],
    ) -> dict[str, Any]:
        try:
            tasks = [asyncio.create_task(agent(c)) for c in tournament.players]
            await asyncio.wait(tasks, timeout=self.seconds + 20)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        finally:
            await end_tournament(operator, tournament.tid)
            await tournament.close()
        in_hand = [lat for _, lat, same in self.samples if same]
        return {
            "seconds": self.seconds,
            "actions": self.sent,
            **percentiles([lat for _, lat, _ in self.samples]),
            "in_hand_p50_ms": percentiles(in_hand)["p50_ms"],
            "after_a_deal": len(self.samples) - len(in_hand),
        }


async def turn_latency(target: Target, operator: SngClient, *, seconds: float) -> dict[str, Any]:
    """Six agents that learn of their turn only from their own stream (SSE ``/me/stream``)
    and act over HTTP: the time from one player sending an action to the next
    ``action_required`` reaching the player to act (docs/events.md). It includes the act's own
    round trip up to the table's publication, which comes before the act's answer."""
    tournament = await open_tournament(target, operator, stack=100_000)
    clock = _TurnClock(seconds)

    async def agent(client: SngClient) -> None:
        headers = dict(client.http.headers)
        async with (
            httpx.AsyncClient(base_url=target.api_url, timeout=None) as http,
            http.stream(
                "GET", f"/tournaments/{tournament.tid}/me/stream", headers=headers
            ) as response,
        ):
            event = ""
            async for line in response.aiter_lines():
                if not clock.running():
                    return
                if line.startswith("event:"):
                    event = line.partition(":")[2].strip()
                elif line.startswith("data:") and event == "action_required":
                    turn = json.loads(line.partition(":")[2])
                    clock.turn_arrived(turn)
                    # A repeated turn is answered again (a lost act must not stall the
                    # table) but timed once.
                    await clock.answer(client, tournament.tid, turn)

    return await clock.measure(operator, tournament, agent)


async def turn_latency_long_poll(
    target: Target, operator: SngClient, *, seconds: float
) -> dict[str, Any]:
    """Section 8 again for agents that long-poll (``waitForChange``) instead of streaming:
    from one player sending an action to the next player's long-poll answering with its
    ``legalActions``."""
    tournament = await open_tournament(target, operator, stack=100_000)
    clock = _TurnClock(seconds)

    async def agent(client: SngClient) -> None:
        version: int | None = None
        while clock.running():
            try:
                state = await client.game_state(
                    tournament.tid, wait_for_change=version, wait_seconds=5
                )
            except (SngError, httpx.HTTPError):
                await asyncio.sleep(0.1)
                continue
            version = state["version"]
            if not state.get("legalActions") or not clock.turn_arrived(state):
                continue
            await clock.answer(client, tournament.tid, state)

    return await clock.measure(operator, tournament, agent)


async def turn_latency_ws(target: Target, operator: SngClient, *, seconds: float) -> dict[str, Any]:
    """Section 8 for agents on the WebSocket alone (``/me/ws``, docs/events.md): each learns
    of its turn from ``action_required`` and acts on the same socket. The turn as before, and
    the act's own round trip there (sent -> its ``act_result``): the act without a new HTTP
    request's parsing, authentication and client work each time."""
    import websockets

    tournament = await open_tournament(target, operator, stack=100_000)
    clock = _TurnClock(seconds)
    acts: list[float] = []
    path = f"/tournaments/{tournament.tid}/me/ws"
    url = target.api_url.replace("http://", "ws://", 1) + path

    async def agent(client: SngClient) -> None:
        sent: dict[int, float] = {}
        number = 0
        # The credential only: httpx's own headers (Connection: keep-alive among them) would
        # break the socket's handshake.
        auth = {
            k: v
            for k, v in client.http.headers.items()
            if k.lower() in ("authorization", "x-agent-key")
        }
        async with websockets.connect(url, additional_headers=auth) as ws:
            async for raw in ws:
                if not clock.running():
                    return
                message = json.loads(raw)
                event = message.get("event")
                if event in ("act_result", "error") and message.get("requestId") in sent:
                    started = sent.pop(message["requestId"])
                    if event == "act_result":
                        acts.append(time.perf_counter() - started)
                    continue
                if event != "action_required":
                    continue
                turn = message["data"]
                clock.turn_arrived(turn)
                action, amount = calling_station(turn, clock.rng)
                clock.turns.sent(turn["handNumber"], turn["turn"])
                clock.sent += 1
                number += 1
                sent[number] = time.perf_counter()
                body = {
                    "type": "act",
                    "requestId": number,
                    "handNumber": turn["handNumber"],
                    "turn": turn["turn"],
                    "action": action,
                }
                if amount is not None:
                    body["amount"] = amount
                await ws.send(json.dumps(body))

    figures = await clock.measure(operator, tournament, agent)
    act = percentiles(acts)
    return {**figures, "act_p50_ms": act["p50_ms"], "act_p99_ms": act["p99_ms"], "acts": len(acts)}
