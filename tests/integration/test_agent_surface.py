"""The agent's surface, as a new agent author meets it (the push-read-path issue's list).

- Game state says who you are: ``you`` (seat, status, place, whether you act, what you may do).
- The ``act`` answer's ``version`` is the game state's, so it can go straight into
  ``waitForChange``, and a read after the answer never shows an older state.
- A retried ``act`` (same hand, turn, action and amount, or the same ``Idempotency-Key``) gets
  the first answer instead of ``stale_turn``.
- A player sat out by two timeouts comes back with ``POST /sit-in``; the table's automatic
  actions say so in the hand's record (``auto``).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import httpx
from temporalio.client import Client

from core.settings import Settings
from tests.integration.helpers import admin, eventually, player
from tests.integration.test_tournament import create_fast, fill, until_state


async def _state(
    http: httpx.AsyncClient, settings: Settings, tid: str, user: str, **params: Any
) -> dict[str, Any]:
    r = await http.get(
        f"/tournaments/{tid}/game-state", params=params, headers=player(settings, user)
    )
    assert r.status_code == 200, r.text
    return dict(r.json())


async def _actor(
    http: httpx.AsyncClient, settings: Settings, tid: str, users: list[str]
) -> tuple[str, dict[str, Any]]:
    async def check() -> tuple[str, dict[str, Any]] | None:
        for user in users:
            st = await _state(http, settings, tid, user)
            if st["you"] and st["you"]["toAct"]:
                return user, st
        return None

    return await eventually(check, 20)


async def test_act_answers_in_game_state_terms_and_a_retry_gets_the_first_answer(
    api_url: str, settings: Settings, client: Client
) -> None:
    users = ["as-a", "as-b"]
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        tid = await create_fast(http, settings, 2, stack=5000)
        await fill(http, settings, tid, users)
        await until_state(http, tid, "playing")
        first, st = await _actor(http, settings, tid, users)
        you = st["you"]
        assert you["status"] == "playing" and you["playerId"] == first
        assert you["seat"] in {s["seat"] for s in st["seats"] if s["playerId"] == first}
        assert you["mayDo"] == st["legalActions"]["actions"] and "call" in you["mayDo"]
        other = next(u for u in users if u != first)
        assert (await _state(http, settings, tid, other))["you"]["toAct"] is False

        body = {"handNumber": st["handNumber"], "turn": st["turn"], "action": "call"}
        r1 = await http.post(f"/tournaments/{tid}/act", json=body, headers=player(settings, first))
        assert r1.status_code == 200, r1.text
        # The response was lost, say: the same action again gets the same answer.
        r2 = await http.post(f"/tournaments/{tid}/act", json=body, headers=player(settings, first))
        assert (r2.status_code, r2.json()) == (200, r1.json())
        # A read right after the answer is at its version, and waiting on it waits: nothing
        # else happens until the big blind decides.
        after = await _state(http, settings, tid, first)
        assert after["version"] == r1.json()["version"]
        waited = await _state(
            http, settings, tid, first, waitForChange=r1.json()["version"], timeout=1
        )
        assert waited["version"] == r1.json()["version"] and waited["you"]["toAct"] is False

        # The big blind checks with an idempotency key; a retry with that key gets the first
        # answer; the key with another action is refused (security review N2: it used to get
        # the first answer), and so is a different action without one.
        _, st2 = await _actor(http, settings, tid, [other])
        check = {"handNumber": st2["handNumber"], "turn": st2["turn"], "action": "check"}
        keyed = {**player(settings, other), "Idempotency-Key": "check-1"}
        r3 = await http.post(f"/tournaments/{tid}/act", json=check, headers=keyed)
        assert r3.status_code == 200, r3.text
        r4 = await http.post(
            f"/tournaments/{tid}/act", json={**check, "action": "fold"}, headers=keyed
        )
        assert r4.status_code == 409 and r4.json()["code"] == "idempotency_key_reused", r4.text
        r4 = await http.post(f"/tournaments/{tid}/act", json=check, headers=keyed)
        assert (r4.status_code, r4.json()) == (200, r3.json())
        r5 = await http.post(
            f"/tournaments/{tid}/act",
            json={**check, "action": "fold"},
            headers=player(settings, other),
        )
        assert r5.status_code == 409 and r5.json()["code"] in {"stale_turn", "not_your_turn"}
        bad_key = {**player(settings, other), "Idempotency-Key": "has space"}
        r6 = await http.post(f"/tournaments/{tid}/act", json=check, headers=bad_key)
        assert r6.status_code == 422 and r6.json()["code"] == "validation_error"
    await client.get_workflow_handle(f"tournament-{tid}").terminate("test done")
    await client.get_workflow_handle(f"table-{tid}-1").terminate("test done")


async def test_a_player_sat_out_by_timeouts_comes_back(
    api_url: str, settings: Settings, client: Client
) -> None:
    users = ["so-a", "so-b"]
    silent, awake = users
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        body = {
            "name": "sit-out",
            "handPauseMs": 0,
            "settings": {
                "seats": 2,
                "entryFee": 100,
                "startingStack": 100_000,
                "actionTimeoutSeconds": 3,
                "blindStructure": {
                    "startingSmallBlind": 10,
                    "increaseFactor": 1.5,
                    "levelDurationSeconds": 600,
                },
            },
        }
        r = await http.post("/admin/tournaments", json=body, headers=admin(settings))
        assert r.status_code == 201, r.text
        tid = r.json()["tournamentId"]
        await fill(http, settings, tid, users)
        await until_state(http, tid, "playing")

        seen: set[str | None] = set()  # the ``auto`` of every action the other player saw

        async def awake_plays() -> None:
            """The other player checks or calls whenever it is their turn."""
            version = None
            while True:
                wait = {} if version is None else {"waitForChange": version, "timeout": 5}
                st = await _state(http, settings, tid, awake, **wait)
                version = st["version"]
                seen.update(a.get("auto") for a in (st["hand"] or {}).get("actions", []))
                if st["you"] and st["you"]["toAct"]:
                    action = "check" if "check" in st["you"]["mayDo"] else "call"
                    body = {"handNumber": st["handNumber"], "turn": st["turn"], "action": action}
                    await http.post(
                        f"/tournaments/{tid}/act", json=body, headers=player(settings, awake)
                    )

        other = asyncio.create_task(awake_plays())
        try:

            async def sat_out() -> dict[str, Any] | None:
                st = await _state(http, settings, tid, silent)
                return st if st["you"]["status"] == "sitting_out" else None

            st = await eventually(sat_out, 40)  # two 3 s timeouts, then auto-folds
            assert st["you"]["mayDo"] == ["sit_in"] and st["you"]["toAct"] is False

            async def acted_for() -> bool | None:
                return "sitting_out" in seen or None  # the table checks or folds for them

            await eventually(acted_for, 20)
            r = await http.post(f"/tournaments/{tid}/sit-in", headers=player(settings, silent))
            assert r.status_code == 200, r.text
            again = await http.post(f"/tournaments/{tid}/sit-in", headers=player(settings, silent))
            assert again.status_code == 409 and again.json()["code"] == "invalid_state"
            # Back in: the table waits for this player's decisions again.
            _, turn = await _actor(http, settings, tid, [silent])
            assert turn["you"]["status"] == "playing"
        finally:
            other.cancel()
            with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
                await other

        # The table's own actions say why it took them, live (``sitting_out`` above: a live
        # ``timeout`` may be a fold that ends its hand before anyone reads that state, now
        # that a second timeout folds) and in the hand's record.

        async def recorded() -> dict[str, Any] | None:
            r = await http.get(f"/tournaments/{tid}/hands/1")
            return dict(r.json()) if r.status_code == 200 else None

        record = await eventually(recorded, 20)
        assert "timeout" in {a.get("auto") for a in record["actions"]}, record["actions"]
    await client.get_workflow_handle(f"tournament-{tid}").terminate("test done")
    await client.get_workflow_handle(f"table-{tid}-1").terminate("test done")


def test_act_update_ids_never_collide_across_players_or_turns() -> None:
    """A player id or key spelled to look like another player's action must not share its
    id (Temporal would hand back that player's answer); a key is one action of one turn."""
    from api.services.play import ActBody, act_update_id

    call = ActBody(hand_number=12, turn=4, action="call")
    spelled = ActBody(hand_number=1, turn=1, action="call")
    assert act_update_id("bob:key", call, None) != act_update_id("bob", spelled, "12:4:call:0")
    assert act_update_id("bob", call, "k") != act_update_id("bob", spelled, "k")
    # The same key with another action is another Update: the table refuses it
    # (idempotency_key_reused, security review N2) instead of Temporal answering it with the
    # first action's outcome.
    assert act_update_id("bob", call, "k") != act_update_id(
        "bob", ActBody(hand_number=12, turn=4, action="fold"), "k"
    )
    assert act_update_id("bob", call, "k") == act_update_id("bob", call, "k")
    assert act_update_id("bob", call, None) == act_update_id("bob", call, None)
