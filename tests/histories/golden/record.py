"""Record the golden histories (docs/versioning.md): a tournament played to the end by bots,
its table, and a cash room that deals a few hands and is closed, on a stack of their own,
written as JSON beside the codec key that opens them.

    python -m tests.histories.golden.record tests/histories/golden/v3 [tournament|table|room ...]

Naming kinds records only those, under the directory's existing codec and deck keys (so the
others still open). Each directory is one build's recordings: ``golden/`` from before card
commitments, ``golden/v2/`` dealing committed decks sealed under a deck key, ``golden/v3/``
taking the new side of every patch (``PATCHES`` in tests/test_golden_histories.py). A
directory named ``v3`` (or later) records the v3 room: a turbo room whose first player stays
away for one decision (the polling rule's disconnect grace, then a timeout), lets the next
decision time out too (the second in a row folds and sits out), sits in again, and leaves
before the room closes.

Run it again only when a change is *meant* to break running workflows (and say so in the
changelog); otherwise today's code must replay the recordings as they are
(tests/test_golden_histories.py).
"""

from __future__ import annotations

import asyncio
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from core import deck_vault
from core.codec import DEV_KEY_FILE, ensure_dev_key
from core.settings import Settings
from core.temporal import connect
from core.tokens import mint_player_token
from devtools.devstack import DevStack, isolated_settings
from sdk.bots import POLICIES, Policy
from sdk.client import SngClient, SngError
from sdk.demo import run_demo
from wire.ids import room_workflow_id, table_workflow_id, tournament_workflow_id


def lapsing(policy: Policy, *, times: int, from_hand: int, seconds: float) -> Policy:
    """``policy``, except that its first ``times`` decisions from hand ``from_hand`` on are
    left to the table's timeout (two in a row: the second folds and sits the bot out; the
    demo's bot sits in again at once). It sleeps the recorder's one event loop, which holds up
    nobody: every bot waits on this turn."""
    left = [times]

    def play(state: dict[str, Any], rng: random.Random) -> tuple[str, int | None]:
        if left[0] and (state.get("handNumber") or 0) >= from_hand:
            left[0] -= 1
            time.sleep(seconds)
            return "fold", None  # refused as stale_turn: the timeout took the turn
        return policy(state, rng)

    return play


async def play_room(api: str, settings: Settings, hands: int, *, lapses: bool = False) -> str:
    """Two bots in a fresh room (a random raise now and then, else check or call, so nobody
    busts) until ``hands`` hands were dealt; then it closes.

    ``lapses`` (the v3 set): a turbo room (10 s decisions, 30 s grace) where the first bot,
    from hand 2, stays away for its first decision (no poll: the grace, then the timeout) and
    ignores its second (polling: the second timeout in a row sits it out), sits in again,
    and the second bot leaves before the room closes."""
    async with SngClient(api, service_key=settings.key("admin")) as operator:
        room = await operator.create_room(
            "golden room",
            entry=1000,
            small_blind=5,
            big_blind=10,
            seats=2,
            hand_pause_ms=0,
            speed="turbo" if lapses else "normal",
        )
        room_id = str(room["roomId"])
        names = ["golden-a", "golden-b"]
        for name in names:
            await operator.credit(name, 1000, f"golden-{name}")
        players = [SngClient(api, token=mint_player_token(settings, n)) for n in names]
        for player in players:
            await player.join_room(room_id)

        async def bot(client: SngClient, seed: int) -> None:
            rng, version = random.Random(seed), None
            skips = 2 if lapses and seed == 0 else 0  # decisions the first bot lets lapse
            while True:
                state = await client.room_state(room_id, wait_for_change=version, wait_seconds=5)
                version = state["version"]
                if (state.get("handNumber") or 0) > hands or state.get("room", {}).get(
                    "status"
                ) in ("closing", "closed"):
                    return
                if (state.get("you") or {}).get("status") == "sitting_out":
                    await client.room_sit_in(room_id)
                    continue
                legal = state.get("legalActions")
                if legal and skips and (state.get("handNumber") or 0) >= 2:
                    if skips == 2:  # away: unseen past the decision time, the grace runs
                        await asyncio.sleep(40)
                    skips -= 1  # the next poll sees the turn move on (a timeout)
                    continue
                if legal:
                    kinds = legal["actions"]
                    action, amount = ("check" if "check" in kinds else "call"), None
                    if "raise" in kinds and rng.random() < 0.3:
                        action, amount = "raise", legal["minRaiseTo"]
                    try:
                        await client.room_act(
                            room_id,
                            hand_number=state["handNumber"],
                            turn=state["turn"],
                            action=action,
                            amount=amount,
                        )
                    except SngError as err:
                        if err.code not in ("stale_turn", "not_your_turn"):
                            raise

        await asyncio.wait_for(asyncio.gather(*(bot(p, i) for i, p in enumerate(players))), 300)
        if lapses:
            await players[1].leave_room(room_id)  # pending while its hand runs: both recorded
        await operator.close_room(room_id)
        for player in players:
            await player.aclose()
    return room_id


async def record(out: Path, settings: Settings, kinds: set[str]) -> None:
    api = f"http://{settings.api_host}:{settings.api_port}"
    v3 = out.name.startswith("v") and out.name[1:].isdigit() and int(out.name[1:]) >= 3
    workflow_ids = []
    if kinds & {"tournament", "table"}:
        bots = None
        if v3:  # its table sees two timeouts in a row, a sit-out and a sit-in; no random
            # bot (it busts the table in a few hands, before a level changes)
            POLICIES["lapse"] = lapsing(POLICIES["tag"], times=2, from_hand=2, seconds=12)
            bots = ["lapse", "tag", "equity"]
        result = await run_demo(api, settings, seats=3, level_seconds=30, bots=bots)
        tid = str(result["tournament_id"])
        if "tournament" in kinds:
            workflow_ids.append(tournament_workflow_id(tid))
        if "table" in kinds:
            workflow_ids.append(table_workflow_id(tid))
    if "room" in kinds:
        room_id = await play_room(api, settings, hands=5 if v3 else 3, lapses=v3)
        workflow_ids.append(room_workflow_id(room_id))
    client = await connect(settings)
    for workflow_id in workflow_ids:
        handle = client.get_workflow_handle(workflow_id)
        for _ in range(240):  # until it closed (the room drains its last hand)
            if (await handle.describe()).status.name != "RUNNING":
                break
            await asyncio.sleep(0.5)
        history = await handle.fetch_history()
        kind = workflow_id.split("-")[0]
        if v3 and kind == "table":  # its first run (20 hands) holds the lapses, not its last
            started = history.events[0].workflow_execution_started_event_attributes
            first = client.get_workflow_handle(workflow_id, run_id=started.first_execution_run_id)
            history = await first.fetch_history()
        (out / f"{kind}.json").write_text(history.to_json())
        (out / f"{kind}.id").write_text(workflow_id + "\n")
        print(f"{kind}: {workflow_id}, {len(history.events)} events")


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    kinds = set(sys.argv[2:]) or {"tournament", "table", "room"}
    assert kinds <= {"tournament", "table", "room"}, kinds
    root = Path(tempfile.mkdtemp(prefix="sng-golden-"))
    settings = isolated_settings(root, "sng-golden")
    out.mkdir(parents=True, exist_ok=True)
    if sys.argv[2:]:
        for name in (DEV_KEY_FILE, deck_vault.DEV_KEY_FILE):  # the others keep opening
            shutil.copy(out / name, root / name)
    ensure_dev_key(root)
    ensure_dev_key(root, deck_vault.DEV_KEY_FILE)
    stack = DevStack(settings)
    try:
        stack.start()
        asyncio.run(record(out, settings, kinds))
        for name in (DEV_KEY_FILE, deck_vault.DEV_KEY_FILE):
            shutil.copy(root / name, out / name)
    finally:
        Console().print("stopping…")
        stack.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
