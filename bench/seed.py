"""What the players' seeds cost (docs/fairness.md, docs/capacity.md): the same cash room played
twice on one embedded stack, three bots checking and calling, once sending no seed (the
baseline) and once sending one for every hand; printed side by side.

    python -m bench.seed [--hands 30]

Figures per hand: the room's history events and accepted Updates (every run), wall time, and
the seed round trip (p50/p99) as the client library sends it.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.history import workflow_events
from core.settings import Settings
from core.temporal import connect
from core.tokens import mint_player_token
from devtools.devstack import DevStack, isolated_settings
from sdk.client import SngClient, SngError
from wire.ids import room_workflow_id

PLAYERS = 3


async def play(api: str, settings: Settings, *, hands: int, seeding: bool) -> dict[str, Any]:
    """One room, ``hands`` hands, every bot passive; with ``seeding``, a seed every hand."""
    label = "seeded" if seeding else "baseline"
    async with SngClient(api, service_key=settings.key("admin")) as operator:
        room = await operator.create_room(
            f"seed bench {label}",
            entry=1000,
            small_blind=5,
            big_blind=10,
            seats=PLAYERS,
            hand_pause_ms=0,
        )
        room_id = str(room["roomId"])
        names = [f"seed-{label}-{i}" for i in range(PLAYERS)]
        for name in names:
            await operator.credit(name, 1000, f"seed-bench-{name}")
        bots = [SngClient(api, token=mint_player_token(settings, n)) for n in names]
        for bot in bots:
            await bot.join_room(room_id)
        seed_ms: list[float] = []
        started = time.perf_counter()

        async def run(client: SngClient) -> None:
            version = None
            while True:
                state = await client.room_state(room_id, wait_for_change=version, wait_seconds=5)
                version = state["version"]
                if (state.get("handNumber") or 0) > hands:
                    return
                if seeding:
                    t0 = time.perf_counter()
                    if await client.room_seed(room_id, state):
                        seed_ms.append((time.perf_counter() - t0) * 1000)
                legal = state.get("legalActions")
                if not legal:
                    continue
                action = "check" if "check" in legal["actions"] else "call"
                try:
                    await client.room_act(
                        room_id, hand_number=state["handNumber"], turn=state["turn"], action=action
                    )
                except SngError as err:
                    if err.code not in ("stale_turn", "not_your_turn"):
                        raise

        await asyncio.wait_for(asyncio.gather(*(run(b) for b in bots)), 900)
        seconds = time.perf_counter() - started
        await operator.close_room(room_id)
        for bot in bots:
            await bot.aclose()
    client = await connect(settings)
    handle = client.get_workflow_handle(room_workflow_id(room_id))
    for _ in range(120):
        status = (await handle.describe()).status
        if status is not None and status.name != "RUNNING":
            break
        await asyncio.sleep(0.5)
    events, runs = await workflow_events(client, room_workflow_id(room_id))
    total = sum(v for k, v in events.items() if k != "activity_retry")
    updates = events.get("EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED", 0)
    return {
        "hands": hands,
        "events_per_hand": round(total / hands, 1),
        "updates_per_hand": round(updates / hands, 2),
        "runs": runs,
        "seconds_per_hand": round(seconds / hands, 3),
        "seeds_taken": len(seed_ms),
        "seed_p50_ms": round(statistics.median(seed_ms), 1) if seed_ms else None,
        "seed_p99_ms": round(statistics.quantiles(seed_ms, n=100)[98], 1)
        if len(seed_ms) >= 2
        else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=30)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sng-seed-bench-"))
    settings = isolated_settings(root, "sng-seed-bench")
    stack = DevStack(settings)
    api = f"http://{settings.api_host}:{settings.api_port}"
    try:
        stack.start()
        baseline = asyncio.run(play(api, settings, hands=args.hands, seeding=False))
        seeded = asyncio.run(play(api, settings, hands=args.hands, seeding=True))
    finally:
        stack.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"{'per hand':<22}{'baseline':>12}{'seeded':>12}")
    for key in baseline:
        print(f"{key:<22}{baseline[key]!s:>12}{seeded[key]!s:>12}")


if __name__ == "__main__":
    main()
