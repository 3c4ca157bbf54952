"""``sng demo``: a whole tournament on the running stack, played by the built-in bots.

It creates a tournament, credits and registers N bots, pays their entries, lets them play
through the HTTP client (a live progress line while they do) and reports the final standings
and payouts.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import Any

from rich.console import Console

from core.settings import Settings
from core.tokens import mint_player_token
from sdk.bots import POLICIES, run_bot
from sdk.client import SngClient

DONE = {"closed", "cancelled"}


def demo_settings(seats: int, *, entry_fee: int, stack: int, level_seconds: int) -> dict[str, Any]:
    return {
        "seats": seats,
        "entryFee": entry_fee,
        "startingStack": stack,
        "actionTimeoutSeconds": 10,
        "blindStructure": {
            "startingSmallBlind": max(1, stack // 100),
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
    console: Console | None = None,
) -> dict[str, Any]:
    run = secrets.token_hex(3)
    kinds = bots or [list(POLICIES)[i % len(POLICIES)] for i in range(seats)]
    names = [f"bot-{kind}-{i}-{run}" for i, kind in enumerate(kinds)]
    async with SngClient(api_url, service_key=settings.key("admin")) as operator:
        tid = await operator.create_tournament(
            f"demo {run}",
            demo_settings(seats, entry_fee=entry_fee, stack=stack, level_seconds=level_seconds),
            hand_pause_ms=300,
        )
        for name in names:
            await operator.credit(name, entry_fee, f"demo-{name}")
    players = [SngClient(api_url, token=mint_player_token(settings, name)) for name in names]
    try:
        for client in players:
            await client.register(tid)
            await client.pay(tid, entry_fee)
        tasks = [
            asyncio.create_task(run_bot(client, tid, POLICIES[kind], seed=i))
            for i, (client, kind) in enumerate(zip(players, kinds, strict=True))
        ]
        final = await _follow(players[0], tid, console)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
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
