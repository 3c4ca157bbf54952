"""S6 (security review 3): the disconnect grace renewed on every decision, with no budget.

The reviewer's staller closed its stream 1.5 s before each deadline and acted near the end of
the grace: every decision took ``decision + grace`` (turbo 10 s became 33.5 s, every time),
no timeout was ever counted, and in an MTT's hand-for-hand every table waited for it. Now a
seat gets the grace in at most one hand of every ten (``GRACE_EVERY_HANDS``, behind
``grace-budget-v1``): the staller's next decision in those hands runs out at the decision
time and counts as a timeout like anyone's, and the seat shows when the grace comes back
(``disconnectGraceFromHand``).
"""

from __future__ import annotations

from datetime import timedelta

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from db.engine import Database
from domain.holdem.timeouts import GRACE_EVERY_HANDS
from tests.integration.helpers import set_stream
from tests.integration.test_table import _big_blind_to_act, _turn
from tests.test_golden_histories import patch_markers
from wire.table_messages import ActInput
from workflows.table import TableWorkflow


async def test_a_staller_gets_the_grace_once_then_is_timed_out_like_anyone(
    skipping: tuple[Client, str], time_skipping_env: WorkflowEnvironment, db: Database
) -> None:
    client, task_queue = skipping
    handle, staller, turn = await _big_blind_to_act(
        client, task_queue, actionTimeoutSeconds=5, disconnectGrace=30
    )
    # Its stream drops as the decision begins: held for the grace, and its act counts.
    await set_stream(db, handle.id, staller.player_id, 0)
    await time_skipping_env.sleep(timedelta(seconds=20))
    assert await _turn(handle) == turn, "the first drop gets the grace"
    await handle.execute_update(
        TableWorkflow.act,
        ActInput(player_id=staller.player_id, action="check", hand_no=turn[0], turn=turn[1]),
    )
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None and view.hand["street"] == "flop"
    assert view.hand["actor"] == staller.seat  # heads-up: the big blind acts first after the flop
    seat = next(s for s in view.seats if s.seat == staller.seat)
    assert seat.graced_hand == turn[0] and seat.timeouts == 0
    flop = (view.hand_no, view.hand["turn"])

    # It drops again just as this decision begins: no grace this hand, the timer runs out at
    # the decision time and the timeout counts (a free check).
    await set_stream(db, handle.id, staller.player_id, 0)
    await time_skipping_env.sleep(timedelta(seconds=6))
    assert await _turn(handle) != flop, "the second drop in the hand was graced again"
    view = await handle.query(TableWorkflow.view, None)
    assert view.hand is not None
    timed_out = [x for x in view.hand["actions"] if x.get("seat") == staller.seat][-1]
    assert (timed_out["action"], timed_out["auto"]) == ("check", "timeout")
    seat = next(s for s in view.seats if s.seat == staller.seat)
    assert seat.timeouts == 1 and seat.grace_until is None
    assert GRACE_EVERY_HANDS == 10
    await handle.signal(TableWorkflow.stop)
    await handle.result()
    assert "grace-budget-v1" in patch_markers((await handle.fetch_history()).to_json())


def test_the_seat_shows_when_the_grace_comes_back() -> None:
    from api.game_state import _rationed_until

    assert _rationed_until(None, 4) is None
    assert _rationed_until(4, 4) == 14 and _rationed_until(4, 13) == 14
    assert _rationed_until(4, 14) is None
