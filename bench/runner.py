"""``sng bench``: the service measured against a bare Temporal Update, side by side in one run.

It starts its own isolated stack (temporary directories, free loopback ports: PostgreSQL, the
Temporal dev server, a worker and the API as child processes, as ``sng dev`` does) unless
``--api`` points it at a running one, then runs bounded phases:

1. baseline: sequential no-op Updates to a trivial workflow on the same server;
2. action latency through the API (POST .../act as instant bots play), and its ratio to 1;
3. throughput with N concurrent 6-max tournaments, and its ratio to 1's ceiling, at several
   loads (the latency-against-load curve, drawn as a PNG when matplotlib is installed);
4. history events and estimated Temporal Cloud actions per hand and per tournament;
5. GET game-state with 100 pollers (a process of their own, bench/poll.py), on one API
   replica and then over two, and the Temporal queries it causes;
6. engine µs per action beside pokerkit;
7. ICM ms per call;
8. turn latency: from an action sent to the next player learning of its turn, by SSE stream
   and by long-poll.

Beside them: the bare-Update ceiling at each load's shape (that many trivial workflows, each
sent Updates one after another, all at once), the CPU milliseconds each accepted action cost
the worker, the API replicas, the Temporal server, PostgreSQL and the bench itself (process
trees read with psutil at each load window's ends), and issue 30's targets, each beside its
measured value, its baseline and their ratio (``targets``).

The figures are ratios first: on a small shared machine absolute numbers move run to run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, Group
from rich.table import Table

from bench.cpu import CpuMeter, Watched, listening_pids
from core.settings import Settings, get_settings


@dataclass(frozen=True)
class BenchConfig:
    baseline_updates: int = 300
    concurrency: int = 4
    levels: tuple[int, ...] = (1, 4, 8)
    warmup_s: float = 30.0
    window_s: float = 15.0
    drain_s: float = 30.0
    """the main level's wait for its tournaments to end by themselves (``churn`` only: the
    lasting tables are force-ended at once)"""
    pollers: int = 100
    poll_s: float = 8.0
    engine_hands: int = 500
    baseline_deadline_s: float = 60.0
    settle_s: float = 30.0
    quiesce_s: float = 35.0
    ceiling_s: float = 5.0
    """seconds of concurrent bare Updates per load level (the ceiling)"""
    churn: bool = False
    """the load curve's short random tournaments (bench/load.py ``run_level``)"""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def all_levels(self) -> list[int]:
        return sorted({*self.levels, self.concurrency})


QUICK = BenchConfig(
    baseline_updates=100,
    concurrency=2,
    levels=(1, 2),
    warmup_s=15.0,
    window_s=8.0,
    drain_s=25.0,
    poll_s=3.0,
    engine_hands=100,
    settle_s=15.0,
    quiesce_s=5.0,
    ceiling_s=3.0,
)


# -- the stack -------------------------------------------------------------------------------
@contextlib.contextmanager
def own_stack(
    console: Console, sqlite_pragmas: Sequence[str] = ()
) -> Iterator[tuple[Settings, list[str], list[Watched]]]:
    """PostgreSQL, Temporal, a worker and the API on free ports under a temporary directory,
    removed afterwards, and a second API replica (its URL is the list's one element), and the
    processes whose CPU the bench reads (every child it started, by role). DATABASE_URL is
    ignored so the run never touches a real database. ``sqlite_pragmas`` go to the Temporal
    dev server (``--sqlite-pragma``)."""
    from core.codec import ensure_dev_key
    from devtools.devstack import DevStack, isolated_settings

    root = Path(tempfile.mkdtemp(prefix="sng-bench-"))
    saved = os.environ.pop("DATABASE_URL", None)
    settings = isolated_settings(
        root,
        "sng-bench",
        # The bench force-ends what it leaves running; a refused force-end would leave a
        # tournament dealing on timeouts under every later section (docs/capacity.md).
        force_end_min_level_age_seconds=0,
    )
    if not settings.codec_key.get_secret_value():
        ensure_dev_key(root)  # before the worker and the API race to create it
    stack = DevStack(settings, sqlite_pragmas=tuple(sqlite_pragmas))
    try:
        stack.start()
        replica = stack.add_api_replica()
        watched = [
            Watched("api" if name.startswith("api") else name, proc.pid)
            for name, proc in stack.children
        ]
        if stack.pg is not None and stack.pg.process is not None:
            watched.append(Watched("postgres", stack.pg.process.pid))
        yield settings, [replica], watched
    finally:
        console.print("stopping the bench stack…")
        stack.stop()
        if saved is not None:
            os.environ["DATABASE_URL"] = saved
        shutil.rmtree(root, ignore_errors=True)


# -- the run ---------------------------------------------------------------------------------
async def run_bench(
    api_url: str,
    settings: Settings,
    cfg: BenchConfig,
    console: Console,
    replicas: list[str] | None = None,
    watched: list[Watched] | None = None,
    sqlite_pragmas: Sequence[str] = (),
) -> dict[str, Any]:
    """Every section, in order; ``watched``: the stack's processes by role (found by their
    listening ports when not given: the API, Temporal, PostgreSQL)."""
    from bench.history import engine, icm, tournament_accounting
    from bench.load import (
        FORCE_END_REFUSED,
        Target,
        baseline,
        ceiling,
        polling,
        query_counter,
        quiesce,
        run_level,
        settle,
        turn_latency,
        turn_latency_long_poll,
        turn_latency_ws,
        whole_tournaments,
    )
    from core.temporal import connect
    from sdk.client import SngClient

    began = time.monotonic()
    result: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(terse=True),
            "python": platform.python_version(),
        },
        "config": {**asdict(cfg), "levels": cfg.all_levels},
    }
    failed: dict[str, str] = {}
    result["failed_sections"] = failed
    FORCE_END_REFUSED.clear()
    if watched is None:
        watched, in_bench = discover(api_url, settings)
    else:
        in_bench = []
    meter = CpuMeter([*watched, Watched("bench", os.getpid(), tree=False)])
    result["stack"] = {
        "sqlite_pragmas": list(sqlite_pragmas),
        "processes": meter.pids(),
        # Roles served from the bench's own process (tests run the API and worker in it).
        "in_bench_process": in_bench,
    }

    async def section(name: str, run: Callable[[], Awaitable[Any]]) -> Any:
        """One figure: a failure is written down (and the run goes on to the next one), so a
        broken section never costs the figures the others measured."""
        try:
            return await run()
        except Exception as err:  # every section's own fault, reported, never swallowed
            failed[name] = f"{type(err).__name__}: {err}"[:500]
            console.print(f"[red]{name} failed: {failed[name]}[/red]")
            return None

    console.print("6. engine µs per action (ours and pokerkit, same hands)…")
    result["engine"] = await section("engine", lambda: asyncio.to_thread(engine, cfg.engine_hands))
    console.print("7. ICM ms per call (ours and the sum over every finishing order)…")
    result["icm"] = await section("icm", lambda: asyncio.to_thread(icm))

    target = Target(api_url, settings, await connect(settings))
    console.print(f"1. baseline: {cfg.baseline_updates} sequential no-op Updates…")
    base = await section(
        "baseline",
        lambda: baseline(
            target.client, updates=cfg.baseline_updates, deadline_s=cfg.baseline_deadline_s
        ),
    )
    result["baseline"] = base
    console.print(f"1. the bare-Update ceiling at {cfg.all_levels} workflows…")
    ceilings: dict[int, dict[str, Any]] = {}
    for level in cfg.all_levels:

        async def at_once(level: int = level) -> dict[str, Any]:
            return await ceiling(target.client, workflows=level, seconds=cfg.ceiling_s, meter=meter)

        got = await section(f"ceiling {level}", at_once)
        if got is not None:
            ceilings[level] = got
    result["ceiling"] = list(ceilings.values())

    curve: list[dict[str, Any]] = []
    finished: list[dict[str, Any]] = []
    main: dict[str, Any] = {}
    hands_by_tid: dict[str, Any] = {}
    async with SngClient(api_url, service_key=settings.key("admin")) as operator:
        for level in cfg.all_levels:
            is_main = level == cfg.concurrency
            console.print(f"2–3. {level} concurrent tournament(s) for {cfg.window_s:.0f} s…")

            async def one_level(level: int = level, is_main: bool = is_main) -> dict[str, Any]:
                queries_before, level_began = await query_counter(api_url), time.monotonic()
                figures, rec = await run_level(
                    target,
                    operator,
                    concurrency=level,
                    warmup_s=cfg.warmup_s,
                    window_s=cfg.window_s,
                    drain_s=cfg.drain_s if is_main and cfg.churn else 0.0,
                    meter=meter,
                    churn=cfg.churn,
                )
                level_seconds = time.monotonic() - level_began
                queries = await query_counter(api_url) - queries_before
                figures["temporal_queries_per_s"] = round(queries / level_seconds, 2)
                figures["temporal_queries_per_table_s"] = round(queries / level_seconds / level, 2)
                finished.extend(rec.finished)
                figures["quiesce_s"] = await quiesce(api_url, max_s=cfg.quiesce_s)
                _beside_baselines(figures, base, ceilings.get(level))
                return figures

            figures = await section(f"load {level}", one_level)
            if figures is None:
                continue
            curve.append(figures)
            if is_main:
                main = figures

        result["settled_before_reads_s"] = await section(
            "settle",
            lambda: settle(
                target.client, target.settings.temporal_task_queue, max_s=cfg.settle_s * 2
            ),
        )
        console.print(f"5. {cfg.pollers} pollers on one table's game state…")
        result["polling"] = await section(
            "polling",
            lambda: polling(
                target, operator, pollers=cfg.pollers, seconds=cfg.poll_s, replicas=replicas
            ),
        )

        console.print("8. turn latency: agents driven by their own streams…")
        result["turn_latency"] = await section(
            "turn latency", lambda: turn_latency(target, operator, seconds=cfg.poll_s)
        )
        result["turn_latency_long_poll"] = await section(
            "turn latency (long-poll)",
            lambda: turn_latency_long_poll(target, operator, seconds=cfg.poll_s),
        )
        result["turn_latency_ws"] = await section(
            "turn latency (WebSocket)",
            lambda: turn_latency_ws(target, operator, seconds=cfg.poll_s),
        )
        for name in ("turn_latency", "turn_latency_long_poll", "turn_latency_ws"):
            if result[name] and base and base["p50_ms"]:
                result[name]["ratio_p50"] = round(result[name]["p50_ms"] / base["p50_ms"], 2)

        if not cfg.churn:
            # The lasting tables were force-ended: a hand cut short is never counted, so the
            # history's whole hands come from short tournaments played to their end.
            console.print(f"4. {cfg.concurrency} short tournament(s) played to the end…")
            finished.extend(
                await section(
                    "whole tournaments",
                    lambda: whole_tournaments(
                        target, operator, cfg.concurrency, timeout_s=cfg.settle_s * 4
                    ),
                )
                or []
            )
        console.print(f"4. histories of {len(finished)} finished tournament(s)…")
        hands_by_tid = (
            await section(
                "settled hands",
                lambda: _settled_hands(operator, finished, timeout_s=cfg.settle_s),
            )
            or {}
        )
    history = await section(
        "history", lambda: tournament_accounting(target.client, finished, hands_by_tid)
    )
    if history is not None:
        history["queries_per_tournament_bench_pace"] = round(
            main.get("temporal_queries_per_table_s", 0.0) * history["mean_tournament_seconds"],
            1,
        )
    result["history"] = history

    if main and base:
        result["api_action"] = {
            **{k.removeprefix("act_"): v for k, v in main.items() if k.startswith("act_")},
            "concurrent_tournaments": cfg.concurrency,
            **{
                f"ratio_{p}": round(main[f"act_{p}_ms"] / base[f"{p}_ms"], 2)
                if base[f"{p}_ms"]
                else 0
                for p in ("p50", "p95", "p99")
            },
        }
        result["throughput"] = {
            "concurrent_tournaments": cfg.concurrency,
            "hands_per_min": main.get("hands_per_min", 0.0),
            "actions_per_s": main.get("actions_per_s", 0.0),
            # The sequential bare-Update rate (1 / its mean latency), as earlier runs had it;
            # the ceiling measured at this many workflows at once is beside it.
            "bare_update_ceiling_per_s": base["updates_per_s"],
            "ratio_to_ceiling": round(main.get("actions_per_s", 0.0) / base["updates_per_s"], 3)
            if base["updates_per_s"]
            else 0.0,
            "concurrent_ceiling_per_s": main.get("ceiling_updates_per_s"),
            "ratio_to_concurrent_ceiling": main.get("ratio_to_ceiling"),
            "temporal_queries_per_s": main.get("temporal_queries_per_s", 0.0),
        }
    else:
        result["api_action"] = result["throughput"] = None
    result["load_curve"] = curve
    result["targets"] = targets(result)
    result["force_end_refused"] = list(FORCE_END_REFUSED)
    result["seconds"] = round(time.monotonic() - began, 1)
    return result


def discover(api_url: str, settings: Settings) -> tuple[list[Watched], list[str]]:
    """The processes of a stack the bench did not start, by their listening ports: the API
    (the one ``api_url`` names), the Temporal server and PostgreSQL when on this machine. A
    worker listens on nothing: it is not found. Returns them and the roles that run in the
    bench's own process (then counted as "bench")."""
    from urllib.parse import urlsplit

    from sqlalchemy.engine import make_url

    ports: dict[str, int] = {}
    if port := urlsplit(api_url).port:
        ports["api"] = port
    with contextlib.suppress(ValueError):
        ports["temporal"] = int(settings.temporal_address.rsplit(":", 1)[1])
    with contextlib.suppress(Exception):  # an unparsable URL is simply not watched
        if pg := make_url(settings.database_url).port:
            ports["postgres"] = pg
    pids = listening_pids(ports.values())
    watched, in_bench = [], []
    for role, port in ports.items():
        if (pid := pids.get(port)) is None:
            continue
        if pid == os.getpid():
            in_bench.append(role)
        else:
            watched.append(Watched(role, pid))
    if "api" in in_bench:
        in_bench.append("worker")  # tests serve both from their own process
    return watched, in_bench


def _beside_baselines(
    figures: dict[str, Any], base: dict[str, Any] | None, ceiling: dict[str, Any] | None
) -> None:
    """A load's ratios: act and turn p50 over the bare Update's (sequential) p50, and actions/s
    over the ceiling measured at the same number of workflows."""
    if base and base.get("p50_ms"):
        figures["bare_update_p50_ms"] = base["p50_ms"]
        figures["ratio_p50"] = round(figures["act_p50_ms"] / base["p50_ms"], 2)
        figures["turn_ratio_p50"] = round(figures["turn_p50_ms"] / base["p50_ms"], 2)
    if ceiling and ceiling.get("updates_per_s"):
        figures["ceiling_updates_per_s"] = ceiling["updates_per_s"]
        figures["ceiling_p50_ms"] = ceiling["p50_ms"]
        figures["ratio_to_ceiling"] = round(figures["actions_per_s"] / ceiling["updates_per_s"], 3)


# -- issue 30's targets ------------------------------------------------------------------------
def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 30's figures, each beside what this run measured, its baseline from the same run
    and their ratio; ``met`` is None when the run did not measure it (a level not run, a
    section failed). Definitions (docs/capacity.md, "Issue 30"):

    * a bare Update: the sequential baseline's p50 (section 1);
    * act p50: through the API at that many tables (sections 2–3);
    * turn latency: act sent → the next player's ``action_required`` on their SSE stream, and
      → the next player's long-poll waking with its turn (section 8, one table);
    * the ceiling at 8 tables: 8 trivial workflows each sent Updates one after another, all at
      once, Updates/s over the same run's window (a table takes one action at a time);
    * history events per accepted action: every table event over its accepted ``act``
      Updates, over whole tournaments (so whole hands), every run.
    """
    base = result.get("baseline") or {}
    levels = {c["concurrent_tournaments"]: c for c in result.get("load_curve") or []}
    ceilings = {c["workflows"]: c for c in result.get("ceiling") or []}
    history = result.get("history") or {}
    bare = base.get("p50_ms")
    rows: list[dict[str, Any]] = []

    def row(
        name: str,
        measured: float | None,
        unit: str,
        baseline: float | None,
        baseline_is: str,
        *,
        at_most: float | None = None,
        at_least: float | None = None,
        of_baseline: bool = True,
    ) -> None:
        ratio = (
            round(measured / baseline, 3)
            if of_baseline and measured is not None and baseline
            else None
        )
        judged = ratio if of_baseline else measured
        met = None
        if judged is not None:
            met = judged <= at_most if at_most is not None else judged >= (at_least or 0)
        rows.append(
            {
                "target": name,
                "measured": measured,
                "unit": unit,
                "baseline": baseline,
                "baseline_is": baseline_is,
                "ratio": ratio,
                "at_most": at_most,
                "at_least": at_least,
                "of_baseline": of_baseline,
                "met": met,
            }
        )

    for tables, limit in ((1, 1.5), (4, 2.5)):
        level = levels.get(tables)
        row(
            f"act p50, {tables} table{'s' if tables > 1 else ''}",
            level["act_p50_ms"] if level else None,
            "ms",
            bare,
            "bare Update p50",
            at_most=limit,
        )
    ws = result.get("turn_latency_ws")
    row(
        "act p50, 1 table, on the WebSocket (act_result)",
        ws["act_p50_ms"] if ws and ws.get("acts") else None,
        "ms",
        bare,
        "bare Update p50",
        at_most=1.5,
    )
    for name, how in (
        ("turn_latency", "SSE action_required"),
        ("turn_latency_long_poll", "long-poll wake"),
        ("turn_latency_ws", "WebSocket action_required"),
    ):
        turns = result.get(name)
        row(
            f"turn latency p50 ({how})",
            turns["p50_ms"] if turns and turns.get("count") else None,
            "ms",
            bare,
            "bare Update p50",
            at_most=1.5,
        )
    eight, ceiling8 = levels.get(8), ceilings.get(8)
    row(
        "actions/s at 8 tables",
        eight["actions_per_s"] if eight else None,
        "/s",
        ceiling8["updates_per_s"] if ceiling8 else None,
        "bare Updates/s, 8 workflows at once",
        at_least=0.40,
    )
    row(
        "history events per accepted action (whole hands)",
        history.get("table_events_per_accepted_action")
        if history.get("accepted_actions")
        else None,
        "events",
        None,
        "",
        at_most=10,
        of_baseline=False,
    )
    return rows


async def _settled_hands(
    operator: Any, finished: list[dict[str, Any]], *, timeout_s: float
) -> dict[str, int]:
    """Hands played per finished tournament, once each has settled (or the time is up)."""
    from sdk.demo import DONE

    deadline = time.monotonic() + timeout_s
    hands: dict[str, int] = {}
    for item in finished:
        while True:
            view = await operator.tournament(item["tid"])
            if view["state"] in DONE or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        hands[item["tid"]] = int(view["handsPlayed"])
    return hands


# -- the report ------------------------------------------------------------------------------
def render(result: dict[str, Any]) -> Group:
    """The figures as a table, then issue 30's targets beside what was measured; a section
    that failed shows its failure instead."""
    return Group(_figures(result), render_targets(result.get("targets") or []))


def render_targets(rows: list[dict[str, Any]]) -> Table:
    """One row per target: measured (absolute), baseline (absolute), ratio, wanted, met."""
    table = Table(title="issue 30's targets (this run's baseline beside each)")
    for column in ("target", "measured", "baseline", "ratio", "wanted", "met"):
        table.add_column(column, justify="left" if column == "target" else "right")
    for r in rows:

        def amount(value: float | None, r: dict[str, Any] = r) -> str:
            if value is None:
                return "—"
            return f"{value:.1f} {r['unit']}" if r["unit"] != "events" else f"{value:.2f}"

        percent = r["at_least"] is not None
        if r["ratio"] is None:
            ratio = "—"
        else:
            # Three figures: a ratio shown as "1.50×" must not read as met when it is 1.501.
            ratio = f"{r['ratio']:.1%}" if percent else f"{r['ratio']:.3f}×"
        limit = r["at_most"] if r["at_most"] is not None else r["at_least"]
        sign = "≤" if r["at_most"] is not None else "≥"
        if not r["of_baseline"]:
            wanted = f"{sign} {limit:g}"
        else:
            wanted = f"{sign} {limit:.0%}" if percent else f"{sign} {limit:g}×"
        met = {True: "met", False: "NOT met", None: "not measured"}[r["met"]]
        baseline = amount(r["baseline"])
        if r["baseline_is"] and r["baseline"] is not None:
            baseline += f" ({r['baseline_is']})"
        table.add_row(r["target"], amount(r["measured"]), baseline, ratio, wanted, met)
    return table


def _figures(result: dict[str, Any]) -> Table:
    b, a, t = result.get("baseline"), result.get("api_action"), result.get("throughput")
    h, p, e = result.get("history"), result.get("polling") or {}, result.get("engine")
    table = Table(title=f"sng bench on {result['machine']['cpus']} CPU(s)")
    for column in ("#", "figure", "value", "vs baseline"):
        table.add_column(column, justify="right" if column != "figure" else "left")
    rows: list[tuple[str, str, str, str]] = []
    if b:
        rows += [
            ("1", "bare Update p50 / p95 / p99 ms", _ms(b), ""),
            ("1", "bare Updates/s (sequential)", f"{b['updates_per_s']:.0f}", ""),
        ]
    for c in result.get("ceiling") or []:
        cpu = (c.get("cpu") or {}).get("ms_per_unit", {})
        rows.append(
            (
                "1",
                f"  ceiling, {c['workflows']} workflow(s) at once: Updates/s, p50 ms",
                f"{c['updates_per_s']:.0f}, {c['p50_ms']:.1f}",
                f"Temporal {cpu.get('temporal', 0):.2f} ms CPU/Update" if cpu else "",
            )
        )
    if a and t:
        rows += [
            (
                "2",
                f"API act p50 / p95 / p99 ms ({a['concurrent_tournaments']} tables)",
                _ms(a),
                f"{a['ratio_p50']}× / {a['ratio_p95']}× / {a['ratio_p99']}×",
            ),
            ("3", "hands/min", f"{t['hands_per_min']:.0f}", ""),
            (
                "3",
                "actions/s",
                f"{t['actions_per_s']:.1f}",
                f"{t['ratio_to_ceiling']:.1%} of the sequential rate",
            ),
        ]
    if h:
        rows += [
            (
                "4",
                "events per hand / per tournament",
                f"{h['events_per_hand']} / {h['events_per_tournament']}",
                f"{h['tournaments']} tourn.",
            ),
            (
                "4",
                "table events per accepted action (whole hands)",
                f"{h['table_events_per_accepted_action']}",
                f"{h['accepted_actions']} accepted actions",
            ),
            (
                "4",
                "  with the tournament's events",
                f"{h['events_per_accepted_action']}",
                f"{h['tables_still_running']} table(s) still open",
            ),
            (
                "4",
                "actions per hand / per tournament (history)",
                f"{h['actions_per_hand']} / {h['actions_per_tournament']}",
                f"+{h['queries_per_tournament_bench_pace']} queries",
            ),
        ]
    if h and h.get("marginal_actions") and h.get("marginal_events"):
        me, ma = h["marginal_events"], h["marginal_actions"]
        rows.append(
            (
                "4",
                "marginal per hand: events / actions",
                f"{me['per_hand']} / {ma['per_hand']}",
                f"fixed {me['fixed_per_tournament']:.0f} ev / {ma['fixed_per_tournament']:.0f} act",
            )
        )
    for mode in ("one_poller", "distinct_viewers", "one_viewer", "two_replicas"):
        if mode in p:
            m = p[mode]
            who = "1 poller" if mode == "one_poller" else f"{p['pollers']} pollers, {mode}"
            rows.append(
                (
                    "5",
                    f"GET state ({who.replace('_', ' ')}) req/s, p99 ms",
                    f"{m['requests_per_s']:.0f}, {m['p99_ms']:.0f}",
                    f"{m['temporal_queries_per_s']:.0f} queries/s",
                )
            )
    for name, how in (
        ("turn_latency", "action_required, SSE"),
        ("turn_latency_long_poll", "legalActions, long-poll"),
        ("turn_latency_ws", "action_required, WebSocket"),
    ):
        t = result.get(name)
        if t:
            rows.append(
                (
                    "8",
                    f"turn latency p50 / p99 ms (action sent → next {how})",
                    f"{t['p50_ms']:.0f} / {t['p99_ms']:.0f}",
                    f"{t.get('ratio_p50', 0)}× baseline",
                )
            )
    if e:
        rows.append(
            (
                "6",
                "engine µs/action ours / pokerkit",
                f"{e['ours_us_per_action']:.1f} / {e['pokerkit_us_per_action']:.1f}",
                f"{e['speedup']}× faster",
            )
        )
    if i := result.get("icm"):
        rows.append(
            (
                "7",
                "ICM ms/call, 8 all paid: ours / every order",
                f"{i['dp_8_ms']} / {i['orders_8_ms']}",
                f"{i['speedup_8']}× faster",
            )
        )
        rows.append(("7", "ICM ms/call, 10 players all paid (ours)", f"{i['dp_10_ms']}", ""))
    for name, why in (result.get("failed_sections") or {}).items():
        rows.append(("!", f"{name}: FAILED", why[:80], ""))
    for row in rows:
        table.add_row(*row)
    for level in result.get("load_curve") or []:
        n = level["concurrent_tournaments"]
        table.add_row(
            "3",
            f"  load {n}: act p50/p95 ms, actions/s",
            f"{level['act_p50_ms']:.0f} / {level['act_p95_ms']:.0f}, {level['actions_per_s']:.1f}",
            f"{level.get('ratio_p50', 0)}×, {level.get('ratio_to_ceiling', 0):.1%} of ceiling",
        )
        table.add_row(
            "8",
            f"  load {n}: turn p50 / p99 ms (long-poll wake)",
            f"{level['turn_p50_ms']:.0f} / {level['turn_p99_ms']:.0f}",
            f"{level.get('turn_ratio_p50', 0)}× baseline",
        )
        if cpu := level.get("cpu"):
            per = cpu["ms_per_unit"]
            table.add_row(
                "3",
                f"  load {n}: CPU ms/action " + " / ".join(per),
                " / ".join(f"{v:.1f}" for v in per.values()),
                f"machine {cpu['machine_ms_per_unit']:.1f},"
                f" busy {cpu['machine_busy_fraction']:.0%}",
            )
    return table


def _ms(f: dict[str, Any]) -> str:
    return f"{f['p50_ms']:.1f} / {f['p95_ms']:.1f} / {f['p99_ms']:.1f}"


def draw(result: dict[str, Any], path: Path) -> bool:
    """Action latency (p50, p95) and actions/s against concurrent tournaments; False when
    matplotlib is not installed (``pip install -e .[bench]``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    curve = result.get("load_curve")
    if not curve or not result.get("baseline"):
        return False  # nothing to draw: the sections it plots failed (see the table)
    xs = [c["concurrent_tournaments"] for c in curve]
    fig, left = plt.subplots(figsize=(7, 4.2))
    left.plot(xs, [c["act_p50_ms"] for c in curve], "o-", label="act p50")
    left.plot(xs, [c["act_p95_ms"] for c in curve], "s-", label="act p95")
    left.axhline(result["baseline"]["p50_ms"], color="grey", ls="--", label="bare Update p50")
    left.set_xlabel("concurrent 6-max tournaments (one worker)")
    left.set_ylabel("latency through the API (ms)")
    left.set_xticks(xs)
    right = left.twinx()
    right.plot(xs, [c["actions_per_s"] for c in curve], "^:", color="tab:green")
    right.set_ylabel("actions/s", color="tab:green")
    left.legend(loc="upper left")
    left.set_title(f"sng bench: latency against load ({result['machine']['cpus']} CPUs)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def check_pragma(pragma: str) -> str:
    """``NAME=VALUE`` (a SQLite pragma as the dev server's ``--sqlite-pragma`` takes it), or a
    clear refusal before any stack starts."""
    name, sep, value = pragma.partition("=")
    if not sep or not name.strip().isidentifier() or not value.strip():
        raise typer.BadParameter(
            f"{pragma!r} is not NAME=VALUE (e.g. journal_mode=WAL)", param_hint="--sqlite-pragma"
        )
    return f"{name.strip()}={value.strip()}"


def bench(
    out: Annotated[Path, typer.Option("--out", help="where to write the JSON")] = Path(
        "bench.json"
    ),
    png: Annotated[
        Path | None, typer.Option(help="the latency-against-load PNG (default: beside --out)")
    ] = None,
    api_url: Annotated[
        str, typer.Option("--api", help="measure a running stack instead of our own")
    ] = "",
    quick: Annotated[bool, typer.Option("--quick", help="small counts: about a minute")] = False,
    concurrency: Annotated[
        int | None,
        typer.Option("-n", "--concurrency", min=1, help="tournaments for 2–4 (default 4)"),
    ] = None,
    levels: Annotated[str | None, typer.Option(help="loads for the curve, e.g. 1,2,4,8")] = None,
    window: Annotated[float | None, typer.Option(min=1, help="seconds measured per load")] = None,
    updates: Annotated[int | None, typer.Option(min=1, help="baseline Updates")] = None,
    pollers: Annotated[int | None, typer.Option(min=1, help="game-state pollers")] = None,
    engine_hands: Annotated[int | None, typer.Option(min=1, help="engine hands")] = None,
    sqlite_pragma: Annotated[
        list[str] | None,
        typer.Option(
            "--sqlite-pragma",
            help="a pragma for the Temporal dev server's SQLite, NAME=VALUE (repeatable), e.g."
            " journal_mode=WAL; own stack only",
        ),
    ] = None,
    churn: Annotated[
        bool,
        typer.Option(
            "--churn",
            help="load tables with short random tournaments (1,500 chips, any action) instead"
            " of lasting ones: registrations and settlements in every window",
        ),
    ] = False,
    mtt: Annotated[
        int | None,
        typer.Option(
            "--mtt",
            min=11,
            max=10_000,
            help="instead: one multi-table tournament of this many bots, and its history"
            " events, actions and queries per entry (docs/capacity.md)",
        ),
    ] = None,
    mtt_seats: Annotated[int, typer.Option("--mtt-seats", min=2, max=10)] = 9,
    mtt_stack: Annotated[
        int, typer.Option("--mtt-stack", min=100, help="the first small blind is 1/100")
    ] = 200,
    mtt_late: Annotated[int, typer.Option("--mtt-late-seconds", min=0)] = 0,
    mtt_re_entries: Annotated[int, typer.Option("--mtt-re-entries", min=0)] = 0,
) -> None:
    """Benchmark the service against a bare Temporal Update: a table, JSON and a PNG.

    With --mtt N: one multi-table tournament of N bots instead, and what it cost Temporal."""
    if mtt is not None:
        _bench_mtt(
            out,
            api_url,
            mtt,
            seats=mtt_seats,
            stack=mtt_stack,
            late=mtt_late,
            re_entries=mtt_re_entries,
        )
        return
    pragmas = [check_pragma(p) for p in sqlite_pragma or []]
    if pragmas and api_url:
        raise typer.BadParameter(
            "applies to the bench's own dev server only, not to a stack given by --api",
            param_hint="--sqlite-pragma",
        )
    cfg = QUICK if quick else BenchConfig()
    overrides: dict[str, Any] = {
        "concurrency": concurrency,
        "window_s": window,
        "baseline_updates": updates,
        "pollers": pollers,
        "engine_hands": engine_hands,
        "levels": tuple(int(x) for x in levels.split(",")) if levels else None,
        "churn": churn or None,
    }
    cfg = replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
    console = Console(stderr=True)
    if api_url:
        result = asyncio.run(run_bench(api_url, get_settings(), cfg, console))
    else:
        with own_stack(console, pragmas) as (settings, replicas, watched):
            url = f"http://{settings.api_host}:{settings.api_port}"
            result = asyncio.run(run_bench(url, settings, cfg, console, replicas, watched, pragmas))
    out.write_text(json.dumps(result, indent=2) + "\n")
    Console().print(render(result))
    console.print(f"JSON written to {out}")
    png_path = png or out.with_suffix(".png")
    if draw(result, png_path):
        console.print(f"latency against load drawn in {png_path}")
    else:
        console.print("no PNG drawn (matplotlib missing: pip install -e '.\\[bench]', or no curve)")
    if result["failed_sections"]:
        console.print(f"[red]failed sections: {', '.join(result['failed_sections'])}[/red]")
        raise typer.Exit(1)


def _bench_mtt(
    out: Path, api_url: str, entrants: int, *, seats: int, stack: int, late: int, re_entries: int
) -> None:
    from bench.mtt import render_mtt, run_mtt

    console = Console(stderr=True)

    async def one(url: str, settings: Settings) -> dict[str, Any]:
        return await run_mtt(
            url,
            settings,
            console,
            entrants=entrants,
            seats=seats,
            stack=stack,
            late_seconds=late,
            re_entries=re_entries,
        )

    if api_url:
        result = asyncio.run(one(api_url, get_settings()))
    else:
        with own_stack(console) as (settings, _replicas, _watched):
            result = asyncio.run(one(f"http://{settings.api_host}:{settings.api_port}", settings))
    out.write_text(json.dumps(result, indent=2) + "\n")
    Console().print(render_mtt(result))
    console.print(f"JSON written to {out}")
    if not result["paid_equals_pool"] or result["state"] != "closed":
        raise typer.Exit(1)
