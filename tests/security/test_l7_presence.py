"""L7 (security review): presence and observer counts could be inflated.

An anonymous observer was ``sha256(address | User-Agent)``, so a client that changed its user
agent on every request counted as a new observer each time (``observerCount``) and added a
row to ``room_presence`` each time, never pruned; and an action on any room id, existing or
not, wrote a presence row before the room was looked up. Now an anonymous observer is its
address, an action writes presence only once the room took it, and observer rows gone for
ten minutes are pruned.
"""

from __future__ import annotations

import uuid

import httpx
from sqlmodel import col, select
from temporalio.worker import Worker

from core.settings import Settings
from db.engine import Database
from db.models import RoomPresence
from tests.integration.helpers import player
from tests.integration.test_rooms import open_room


async def _rows(db: Database, room_id: str) -> int:
    async with db.session() as session:
        rows = await session.exec(select(RoomPresence).where(col(RoomPresence.room_id) == room_id))
        return len(rows.all())


async def test_a_changing_user_agent_is_still_one_observer(
    api_url: str, settings: Settings, worker: Worker, db: Database
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        room_id = await open_room(http, settings)
        for n in range(20):
            r = await http.get(
                f"/rooms/{room_id}/game-state", headers={"user-agent": f"crawler/{n}.0"}
            )
            assert r.status_code == 200, r.text
        assert (await http.get(f"/rooms/{room_id}")).json()["observerCount"] == 1
        assert await _rows(db, room_id) == 1


async def test_an_action_on_a_room_that_does_not_exist_writes_nothing(
    api_url: str, settings: Settings, worker: Worker, db: Database
) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        ghost = f"room_{uuid.uuid4().hex}"
        body = {"handNumber": 1, "turn": 0, "action": "fold"}
        r = await http.post(f"/rooms/{ghost}/action", json=body, headers=player(settings, "l7"))
        assert r.status_code == 404, r.text
    assert await _rows(db, ghost) == 0


async def test_observers_gone_for_ten_minutes_are_pruned(
    api_url: str, settings: Settings, worker: Worker, db: Database
) -> None:
    from datetime import UTC, datetime, timedelta

    from api import presence

    async with httpx.AsyncClient(base_url=api_url, timeout=30) as http:
        room_id = await open_room(http, settings)
        long_ago = datetime.now(UTC) - timedelta(minutes=11)
        async with db.session() as session:
            session.add(RoomPresence(room_id=room_id, viewer="anon:gone", last_seen=long_ago))
            session.add(
                RoomPresence(room_id=room_id, viewer="p-seated", seated=True, last_seen=long_ago)
            )
            await session.commit()
        presence._last_prune = 0.0  # as in a process that has not pruned yet
        assert (await http.get(f"/rooms/{room_id}/game-state")).status_code == 200
    async with db.session() as session:
        rows = await session.exec(select(RoomPresence).where(col(RoomPresence.room_id) == room_id))
        viewers = sorted(r.viewer for r in rows.all())
    assert "anon:gone" not in viewers and "p-seated" in viewers, viewers
