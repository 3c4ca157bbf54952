"""N2 (second security review): a room run's Update budget spent *within* one hand.

H3 made no-op requests free, but the room's 500-Update hand-over is read only between hands.
The attacks, each through the API as a client sends it, while a hand runs and the victim is to
act:

- another funded account joins and leaves over and over (each cycle two accepted Updates and a
  dozen events; on the reviewed main all 200 cycles were accepted within the hand, on the way
  to Temporal's 2,000 Updates per run, after which the victim's ``act`` is refused and the
  victim folds on timeout);
- many accounts each join and leave once (no cooldown stops that): the run's budget must;
- ten acts for one turn under ten ``Idempotency-Key``s (on the reviewed main all reached
  history when they came in one workflow task);
- one ``Idempotency-Key`` reused with another action (answered with the first action's result).

Now a player waits a cooldown before joining a room they left (``429 room_join_cooldown``),
joins and leaves are refused with ``503 temporarily_unavailable`` once the run accepted its
budget (checked in the validators, so within a hand too), a second act for a turn is refused
before history (``409 already_acted``), a reused key with another action is ``409
idempotency_key_reused``, and the victim's act still goes through.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from typing import Any

import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from core.settings import Settings
from db.engine import Database
from tests.integration.bots import passive
from tests.integration.helpers import credit, eventually, player
from tests.integration.test_rooms import open_room, workflow_id
from wire.table_messages import RoomSpec, RoomState, TableResult, TableView
from worker import build_worker
from workflows.room import RoomWorkflow

CYCLES = 200
"""Join→leave cycles by one funded account within one hand (the review ran 40; 1,000 would
exhaust Temporal's 2,000 Updates per run)."""

ACCEPTED = EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED


async def accepted_updates(handle: WorkflowHandle[Any, Any]) -> Counter[str]:
    """The Updates this run accepted into its history, by name (a refused one leaves none)."""
    history = await handle.fetch_history()
    return Counter(
        e.workflow_execution_update_accepted_event_attributes.accepted_request.input.name
        for e in history.events
        if e.event_type == ACCEPTED
    )


async def settled(handle: WorkflowHandle[Any, Any]) -> Counter[str]:
    """``accepted_updates`` once the history stopped moving (a task may still be committing)."""
    length = (await handle.describe()).history_length
    while True:
        await asyncio.sleep(0.5)
        now = (await handle.describe()).history_length
        if now == length:
            return await accepted_updates(handle)
        length = now


async def start_room(
    client: Client, task_queue: str, **spec: Any
) -> WorkflowHandle[Any, TableResult]:
    """A slow three-seat room started on ``task_queue`` with these ``RoomSpec`` fields (the
    API opens rooms with the defaults); it writes its record, so the API serves it."""
    hexid = uuid.uuid4().hex[:10]
    now_ms = int(time.time() * 1000)
    st = RoomState(
        table_id=f"room-{hexid}",
        seat_count=3,
        seats=[],
        hand_pause_ms=0,
        room=RoomSpec(
            room_id=f"room_{hexid}",
            name="n2",
            entry=1000,
            small_blind=5,
            big_blind=10,
            speed="slow",
            decision_timeout=120,
            disconnect_grace=300,
            created_ms=now_ms,
            idle_since_ms=now_ms,
            **spec,
        ),
    )
    return await client.start_workflow(RoomWorkflow.run, st, id=st.table_id, task_queue=task_queue)


async def _room_exists(http: httpx.AsyncClient, room_id: str) -> bool:
    return (await http.get(f"/rooms/{room_id}")).status_code == 200


def cycles_within(seconds: float, cooldown: int = 10) -> int:
    """How many join→leave cycles the come-back cooldown lets one player make in this long:
    the first at once, then one after 10 s, 20 s more, 40 s more..."""
    cycles, waited = 1, 0
    while waited + cooldown * 2 ** (cycles - 1) <= seconds:
        waited += cooldown * 2 ** (cycles - 1)
        cycles += 1
    return cycles


class Seated:
    """An attacker and a victim seated in a room, the attacker answering when asked."""

    def __init__(
        self, http: httpx.AsyncClient, settings: Settings, handle: WorkflowHandle[Any, Any]
    ) -> None:
        self.http, self.settings, self.handle = http, settings, handle
        self.room_id = "room_" + handle.id.removeprefix("room-")
        self.attacker, self.victim = (f"n2-{n}-{uuid.uuid4().hex[:6]}" for n in "av")

    async def sit(self) -> None:
        for user in (self.attacker, self.victim):
            await credit(self.http, self.settings, user, 5000)
            r = await self.http.post(
                f"/rooms/{self.room_id}/join", json={}, headers=player(self.settings, user)
            )
            assert r.status_code == 200, r.text

    async def victim_to_act(self) -> TableView:
        """Wait until the victim is to act in a running hand (the attacker calls meanwhile)."""

        async def check() -> TableView | None:
            view: TableView = await self.handle.query(RoomWorkflow.view, self.victim)
            hand = view.hand
            if not hand or hand["over"]:
                return None
            seats = {s.player_id: s.seat for s in view.seats}
            if hand["actor"] == seats.get(self.victim):
                return view
            if hand["actor"] == seats.get(self.attacker):
                body = {"handNumber": view.hand_no, "turn": hand["turn"], "action": "call"}
                await self.http.post(
                    f"/rooms/{self.room_id}/action",
                    json=body,
                    headers=player(self.settings, self.attacker),
                )
            return None

        return await eventually(check, limit=60)

    def body(self, view: TableView) -> dict[str, Any]:
        assert view.hand is not None
        action, amount = passive(view.hand["legal"])
        return {
            "handNumber": view.hand_no,
            "turn": view.hand["turn"],
            "action": action,
            "amount": amount,
        }

    async def victim_acts(self, view: TableView, key: str | None = None) -> httpx.Response:
        headers = player(self.settings, self.victim)
        if key is not None:
            headers["Idempotency-Key"] = key
        return await self.http.post(
            f"/rooms/{self.room_id}/action", json=self.body(view), headers=headers
        )

    async def same_hand(self, view: TableView) -> bool:
        now: TableView = await self.handle.query(RoomWorkflow.view, self.victim)
        return now.hand_no == view.hand_no and now.hand is not None and not now.hand["over"]


async def test_join_leave_cycles_within_a_hand_are_refused_and_the_victim_still_acts(
    api_url: str, settings: Settings, client: Client, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        room_id = await open_room(http, settings, seats=3, speed="slow")
        table = Seated(http, settings, client.get_workflow_handle(workflow_id(room_id)))
        await table.sit()
        view = await table.victim_to_act()
        before = await settled(table.handle)

        # The attack: another funded account joins and leaves, again and again, mid-hand.
        cycler = f"n2-c-{uuid.uuid4().hex[:6]}"
        await credit(http, settings, cycler, 1_000_000)
        as_cycler = player(settings, cycler)
        answers: Counter[tuple[str, int, str | None]] = Counter()
        retry_after: set[str | None] = set()
        started = time.monotonic()
        for _ in range(CYCLES):
            for step in ("join", "leave"):
                r = await http.post(f"/rooms/{room_id}/{step}", json={}, headers=as_cycler)
                answers[(step, r.status_code, r.json().get("code"))] += 1
                if r.status_code == 429:
                    retry_after.add(r.headers.get("Retry-After"))

        elapsed = time.monotonic() - started
        assert await table.same_hand(view), "the hand ended: the attack ran outside it"
        after = await settled(table.handle)
        spent = sum((after - before).values())
        # On the reviewed main: 400 accepted Updates within this one hand. Now the first
        # cycle goes through, and each later come-back waits 10 s, doubling: in the time the
        # loop took, only a handful can; every other join is refused before history.
        allowed = cycles_within(elapsed)
        assert spent <= 2 * allowed, (spent, allowed, answers)
        assert answers[("join", 429, "room_join_cooldown")] >= CYCLES - allowed, answers
        assert answers[("join", 200, None)] + answers[("join", 429, "room_join_cooldown")] == CYCLES
        assert retry_after and all(s is not None and int(s) >= 1 for s in retry_after)

        # The victim's action in that same hand is accepted.
        r = await table.victim_acts(view)
        assert r.status_code == 200, r.text


async def test_many_accounts_cannot_spend_the_run_budget_within_a_hand(
    api_url: str, settings: Settings, client: Client, worker: Worker, task_queue: str
) -> None:
    """Any number of accounts, each joining and leaving once (no cooldown applies): past the
    run's budget their joins and leaves are refused, retryable, and the victim still acts.
    The budget is 500 Updates by default; this room is opened with the smallest one (20), so
    the property (joins and leaves stop at the budget, within the hand) shows in CI time."""
    budget = 20
    handle = await start_room(client, task_queue, updates_per_run=budget)
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        table = Seated(http, settings, handle)
        await eventually(lambda: _room_exists(http, table.room_id))
        await table.sit()
        view = await table.victim_to_act()

        accounts = [f"n2-m{n}-{uuid.uuid4().hex[:6]}" for n in range(budget)]
        answers: Counter[tuple[str, int, str | None]] = Counter()
        refused_headers: set[str | None] = set()
        for user in accounts:
            await credit(http, settings, user, 5000)
            for step in ("join", "leave"):
                r = await http.post(
                    f"/rooms/{table.room_id}/{step}", json={}, headers=player(settings, user)
                )
                answers[(step, r.status_code, r.json().get("code"))] += 1
                if r.status_code == 503:
                    refused_headers.add(r.headers.get("Retry-After"))

        assert await table.same_hand(view), "the hand ended: the attack ran outside it"
        accepted = await settled(handle)
        # Joins and leaves stop at the budget: the run has all the rest for the hand's acts.
        assert accepted["join"] + accepted["leave"] <= budget, accepted
        # (A seat taken by a join whose leave came past the budget fills the room: later
        # joins are room_full.)
        refused = [n for (_, status, code), n in answers.items() if status == 503]
        assert sum(refused) > 0, answers
        assert all(
            code == "temporarily_unavailable" for (_, status, code) in answers if status == 503
        )
        assert refused_headers and all(s is not None and int(s) >= 1 for s in refused_headers)

        r = await table.victim_acts(view)
        assert r.status_code == 200, r.text
        await handle.terminate("test over")


async def test_ten_acts_for_one_turn_under_ten_keys_reach_history_once(
    api_url: str, settings: Settings, client: Client, worker: Worker, db: Database
) -> None:
    """The room runs on its own worker, stopped while the ten acts are sent: Temporal holds
    them, and the restarted worker gets them in one workflow task (the review's case: before
    the loop applied the first, every validator passed)."""
    queue = f"n2-{uuid.uuid4().hex[:10]}"
    handle = await start_room(client, queue)
    async with httpx.AsyncClient(base_url=api_url, timeout=120) as http:
        table = Seated(http, settings, handle)
        async with build_worker(client, db, queue):
            await eventually(lambda: _room_exists(http, table.room_id))
            await table.sit()
            view = await table.victim_to_act()
            before = await settled(handle)

        sent = [asyncio.create_task(table.victim_acts(view, key=f"n2-key-{n}")) for n in range(10)]
        await asyncio.sleep(3)  # all ten reach Temporal and wait for a worker
        async with build_worker(client, db, queue):
            answers = await asyncio.gather(*sent)
            codes = Counter((r.status_code, r.json().get("code")) for r in answers)
            assert codes[(200, None)] == 1, codes
            assert all(status == 409 for (status, _) in codes if status != 200), codes
            refused = {code for (status, code) in codes if status != 200}
            assert refused <= {"already_acted", "stale_turn", "not_your_turn"}, codes

            after = await settled(handle)
            # On the reviewed main all ten were accepted into history (one applied, nine
            # refused by the loop); now the validator refuses nine before history.
            assert (after - before)["act"] == 1, after - before
            await handle.terminate("test over")


async def test_an_idempotency_key_reused_with_another_action_is_refused(
    api_url: str, settings: Settings, client: Client, worker: Worker
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=60) as http:
        room_id = await open_room(http, settings, seats=2, speed="slow")
        table = Seated(http, settings, client.get_workflow_handle(workflow_id(room_id)))
        await table.sit()
        view = await table.victim_to_act()
        headers = {**player(settings, table.victim), "Idempotency-Key": "n2-one-key"}
        path = f"/rooms/{room_id}/action"
        body = table.body(view)

        first = await http.post(path, json=body, headers=headers)
        assert first.status_code == 200, first.text
        after_first = await settled(table.handle)

        # The same key with another action: refused, and nothing applied (no fold).
        other = {**body, "action": "fold", "amount": None}
        r = await http.post(path, json=other, headers=headers)
        assert r.status_code == 409, r.text
        assert r.json()["code"] == "idempotency_key_reused", r.text
        assert await settled(table.handle) == after_first
        now: TableView = await table.handle.query(RoomWorkflow.view, table.victim)
        assert now.hand is not None
        mine = next(s.seat for s in now.seats if s.player_id == table.victim)
        me = next(p for p in now.hand["players"] if p["seat"] == mine)
        assert not me["folded"], me

        # The same key with the same action: the first answer, as before.
        again = await http.post(path, json=body, headers=headers)
        assert again.status_code == 200, again.text
        assert again.json() == first.json()
        assert await settled(table.handle) == after_first


async def test_a_raise_war_stops_at_the_cap_and_everyone_can_still_act(
    client: Client, worker: Worker, task_queue: str
) -> None:
    """Independent review of N2: two deep seats min-raising each other could spend a run's
    2,000 Updates within one hand (no join or leave needed), after which a third player's act
    is refused. A betting round now takes at most ``RAISES_PER_ROUND`` raises (all-ins
    apart); past it the raiser must call, fold or go all-in, and the round ends."""
    from temporalio.client import WorkflowUpdateFailedError

    from tests.integration.test_table import table_state
    from wire.table_messages import ActInput
    from workflows.actions import RAISES_PER_ROUND
    from workflows.table import TableWorkflow

    players = ["deep-a", "deep-b"]
    st = table_state(players, stack=200_000, actionTimeoutSeconds=60)
    handle = await client.start_workflow(
        TableWorkflow.run, st, id=st.table_id, task_queue=task_queue
    )
    raises = 0
    refused = None
    while refused is None:
        for seat_player in players:
            view = await handle.query(TableWorkflow.view, seat_player)
            legal = view.hand.get("legal") if view.hand else None
            if legal is None:
                continue
            act = ActInput(
                player_id=seat_player,
                hand_no=view.hand_no,
                turn=view.hand["turn"],
                action="raise",
                amount=legal["min_raise_to"],
            )
            try:
                await handle.execute_update(TableWorkflow.act, act)
                raises += 1
            except WorkflowUpdateFailedError as err:
                refused = err
                assert raises == RAISES_PER_ROUND, raises
                # Calling, and going all-in, stay open to the same player.
                call = act.model_copy(update={"action": "call", "amount": None})
                await handle.execute_update(TableWorkflow.act, call)
            break
        assert raises <= RAISES_PER_ROUND, "the raise war went past the cap"
    assert "raises" in str(refused.cause), refused.cause
    await handle.terminate("test done")
