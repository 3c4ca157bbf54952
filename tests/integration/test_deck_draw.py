"""A hand's deck drawn by local activity (``deck-local-v1``, issue 30): one marker event per
draw instead of an activity's three and a workflow task of their own. What must not change:
the hand's blinds follow Temporal's clock (time skipping included), a stop that comes while
the draw runs is read as docs/durability.md rule 9 says, a worker that goes away mid-draw
leaves the draw to the next one, which deals from the draw recorded in history on replay, and
the secret stays sealed (tests/security/test_deck_secret_sealed.py)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.act_writer import ActWriter
from activities.table import new_deck_seed
from core import deck_vault
from core.codec import EncryptionCodec
from core.settings import Settings
from db.engine import Database
from domain.blinds import resolve_blinds
from domain.fairness import commit
from domain.settings import validate_settings
from tests.integration.helpers import eventually
from tests.integration.test_table import start, table_state
from tests.replay import histories_from
from wire.table_messages import ActInput, DeckDraw, TableView
from worker import WORKFLOWS, activities_for, build_replayer, build_worker, single_batch
from workflows.table import TableWorkflow


async def _dealt(handle: WorkflowHandle[Any, Any], hand_no: int) -> TableView:
    async def view() -> TableView | None:
        v = await handle.query(TableWorkflow.view, None)
        return v if v.hand_no >= hand_no and v.hand is not None else None

    return await eventually(view, limit=30)


def _draw_markers(events: list[Any]) -> list[Any]:
    """The deck draws' local-activity markers (their result payloads)."""
    return [
        e.marker_recorded_event_attributes.details["result"].payloads[0]
        for e in events
        if e.HasField("marker_recorded_event_attributes")
        and "new_deck_seed" in str(e.marker_recorded_event_attributes.details["data"])
    ]


async def test_a_hand_after_a_skipped_level_takes_that_levels_blinds_and_draws_in_a_marker(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment
) -> None:
    """The hand's blinds are read at its draw's time, which must be Temporal's clock: the
    test server skips 700 s of the pause between hands (levels last 600 s), so hand 2 is
    dealt at level 1. A local activity's own time is the worker's clock, which does not skip;
    the table stamps the draw with ``workflow.now()``."""
    client, task_queue = skipping
    now_ms = int((await time_skipping_env.get_current_time()).timestamp() * 1000)
    st = table_state(["a", "b"], pause_ms=700_000, actionTimeoutSeconds=60)
    st.play_start_ms = now_ms
    handle = await start(client, task_queue, st)
    view = await _dealt(handle, 1)
    settings = validate_settings(st.settings)
    assert (view.level, view.small_blind) == (0, resolve_blinds(settings, 0).sb)
    actor = next(s for s in view.seats if s.seat == view.hand["actor"])
    await handle.execute_update(
        TableWorkflow.act,
        ActInput(player_id=actor.player_id, action="fold", hand_no=1, turn=view.hand["turn"]),
    )
    await time_skipping_env.sleep(timedelta(seconds=701))
    view = await _dealt(handle, 2)
    level_one = resolve_blinds(settings, 1)
    assert level_one.sb != resolve_blinds(settings, 0).sb
    assert (view.level, view.small_blind, view.big_blind) == (1, level_one.sb, level_one.bb)
    await handle.signal(TableWorkflow.stop)
    await handle.result()

    events = [e async for e in handle.fetch_history_events()]
    scheduled = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert "new_deck_seed" not in scheduled
    # Hand 1 draws twice (its own deck and hand 2's commitment), hand 2 once.
    assert len(_draw_markers(events)) == 3


def _slow_draw(started: asyncio.Event, release: asyncio.Event) -> Any:
    """The real draw, once ``release`` is set (a test's stall, as a slow deck vault or a
    worker that hangs would give)."""

    @activity.defn(name="new_deck_seed")
    async def slow(table_hand: str) -> DeckDraw:
        started.set()
        await release.wait()
        return await new_deck_seed(table_hand)

    return slow


def _worker(client: Client, db: Database, task_queue: str, draw: Any) -> Worker:
    """A worker like ``build_worker``'s whose deck draw is ``draw``."""
    codec = client.data_converter.payload_codec
    assert isinstance(codec, EncryptionCodec)
    theirs = [draw, *(a for a in activities_for(db, codec=codec) if a is not new_deck_seed)]
    deck_vault.ensure_installed()
    return single_batch(
        Worker(
            client,
            task_queue=task_queue,
            workflows=list(WORKFLOWS),
            activities=theirs,
            interceptors=[ActWriter(db)],
        )
    )


async def test_a_stop_while_the_draw_runs_is_read_at_the_first_decision(
    client: Client, db: Database, task_queue: str
) -> None:
    """Rule 9 under ``deck-local-v1``: the draw runs inside its workflow task, so it is no
    wait; a stop that comes while it runs (here it outlasts the task, which is heartbeated)
    is read at the hand's first decision, which voids the hand: every stack is as it was, the
    table ends, and its history replays."""
    started, release = asyncio.Event(), asyncio.Event()
    st = table_state(["a", "b"], actionTimeoutSeconds=60)
    async with _worker(client, db, task_queue, _slow_draw(started, release)):
        handle = await start(client, task_queue, st)
        await asyncio.wait_for(started.wait(), 20)
        await handle.signal(TableWorkflow.stop)

        async def heartbeated() -> bool:
            kinds = [e.event_type async for e in handle.fetch_history_events()]
            signaled = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
            return signaled in kinds and (
                EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED in kinds[kinds.index(signaled) :]
            )

        await eventually(heartbeated, limit=30)  # the stop is in, the draw still runs
        release.set()
        result = await handle.result()
    assert result.aborted_hand == 1
    assert result.stacks == {s.seat: s.stack for s in st.seats}
    events = [e async for e in handle.fetch_history_events()]
    assert len(_draw_markers(events)) == 2  # the hand's deck and the next one's commitment
    (history,) = await histories_from(client, [handle.id])
    replayer = build_replayer(client.data_converter, namespace=client.namespace)
    replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None


async def test_a_worker_killed_mid_draw_leaves_it_to_the_next_which_deals_the_recorded_deck(
    client: Client, db: Database, settings: Settings, task_queue: str, tmp_path: Path
) -> None:
    """The first worker is SIGKILLed while the hand's draw runs (its draw never returns): it
    recorded nothing. The next worker takes the task after its timeout, draws again and
    deals; the history holds one marker per draw, the published roots are those draws', and
    the history replays (a replay reads the draw from its marker, never draws)."""
    started = tmp_path / "started"
    proc = subprocess.Popen(  # noqa: ASYNC220 (killed below, never awaited)
        [
            sys.executable,
            "-m",
            "tests.integration.stalled_draw_worker",
            settings.temporal_address,
            task_queue,
            settings.database_url,
            str(started),
        ]
    )
    try:
        st = table_state(["a", "b"], actionTimeoutSeconds=60)
        handle = await start(client, task_queue, st)

        async def drawing() -> bool:
            assert proc.poll() is None, "the stalled worker died on its own"
            return started.exists()

        await eventually(drawing, limit=60)
    finally:
        proc.kill()
        proc.wait()
    async with build_worker(client, db, task_queue):
        view = await _dealt(handle, 1)
        assert view.next_deck is not None
        events = [e async for e in handle.fetch_history_events()]
        draws = _draw_markers(events)
        assert len(draws) == 2  # hand 1's deck and hand 2's, once each
        decoded = await client.data_converter.decode(draws, [DeckDraw] * len(draws))
        vault = deck_vault.current()
        roots = [commit(vault.open(d.sealed, d.drawn_for)).root_hex for d in decoded]
        assert [d.drawn_for for d in decoded] == [f"{st.table_id}:1", f"{st.table_id}:2"]
        assert roots == [view.deck_commitment, view.next_deck.commitment]
        await handle.signal(TableWorkflow.stop)
        await handle.result()
    (history,) = await histories_from(client, [handle.id])
    replayer = build_replayer(client.data_converter, namespace=client.namespace)
    replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None
