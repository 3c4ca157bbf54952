"""The pushed read model's store (docs/read-model.md): ``read_states`` rows by key, upserted by
version, and the ``NOTIFY`` that tells every API replica a newer version is there."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from db.engine import Database
from db.models import ReadState, TournamentEntrantState
from wire.ids import tournament_workflow_id
from wire.messages import EntrantDelta, TournamentDelta, TournamentView
from wire.table_messages import TableSnapshot
from wire.tournament_delta import compose

CHANNEL = "sng_read_state"
"""The PostgreSQL channel: each notification is ``<key> <version>``."""


def hand_seat_binding(table_id: str, hand_no: int, seat: str) -> bytes:
    """What a finished hand's sealed private part belongs to: that table, hand and seat."""
    return json.dumps(["hand", table_id, hand_no, seat]).encode()


def seal_private(record: dict[str, Any], table_id: str, hand_no: int, codec: Any) -> dict[str, Any]:
    """A finished hand's record as the ``hands`` table keeps it: each seat's private part
    (``private``: its hole cards and their openings, docs/fairness.md) sealed for that seat
    (``EncryptionCodec.seal_value``), so the stored row shows no folded hand to anyone who
    reads the database."""
    private = record.get("private")
    if not private:
        return record
    sealed = {
        seat: codec.seal_value(
            json.dumps(part).encode(), hand_seat_binding(table_id, hand_no, seat)
        )
        for seat, part in private.items()
    }
    return {**record, "private": sealed}


def open_private(record: dict[str, Any], seat: str, codec: Any) -> dict[str, Any] | None:
    """One seat's private part of a stored record, or None when it has none."""
    sealed = (record.get("private") or {}).get(seat)
    if not isinstance(sealed, str):
        return None
    binding = hand_seat_binding(record["table_id"], record["hand_no"], seat)
    opened: dict[str, Any] = json.loads(codec.open_value(sealed, binding))
    return opened


def seat_binding(key: str, player_id: str, hand_no: int) -> bytes:
    """What a sealed private part belongs to: it opens for this table, seat and hand only."""
    return json.dumps(["seat", key, player_id, hand_no]).encode()


async def write_state(
    session: AsyncSession,
    *,
    key: str,
    kind: str,
    version: int,
    public: dict[str, Any],
    private: dict[str, str] | None = None,
) -> None:
    """Upsert one state (a same-version write overwrites; an older one changes nothing) and
    notify the replicas when the transaction commits."""
    values = {
        "kind": kind,
        "version": version,
        "public": public,
        "private": private or {},
        "updated_at": datetime.now(UTC),
    }
    stmt = insert(ReadState).values(key=key, **values)
    stmt = stmt.on_conflict_do_update(
        index_elements=["key"],
        set_={k: stmt.excluded[k] for k in values},
        where=col(ReadState.version) <= stmt.excluded.version,
    )
    await session.exec(stmt)
    await session.exec(select(func.pg_notify(CHANNEL, f"{key} {version}")))


async def write_tournament(session: AsyncSession, delta: TournamentDelta) -> None:
    """One publication of a tournament's view in parts (docs/read-model.md, "The
    tournament's view in parts"), in the caller's transaction: the entrants it carries
    upserted by version (an older one changes nothing, the same one overwrites, as
    ``write_state`` does, and row by row, so a publication that lands late still writes the
    entrants no later one has), then its head, if it carries one, with its ``NOTIFY``."""
    if delta.entrants:
        now = datetime.now(UTC)
        stmt = insert(TournamentEntrantState).values(
            [
                {
                    "tournament_id": delta.tournament_id,
                    "player_id": part.player_id,
                    "ordinal": part.ordinal,
                    "entrant": (
                        part.entrant.model_dump(mode="json") if part.entrant is not None else None
                    ),
                    "stack": part.stack,
                    "stack_ordinal": part.stack_ordinal,
                    "finishes": [f.model_dump(mode="json") for f in part.finishes],
                    "version": delta.version,
                    "updated_at": now,
                }
                for part in delta.entrants
            ]
        )
        await session.exec(
            stmt.on_conflict_do_update(
                index_elements=["tournament_id", "player_id"],
                set_={
                    k: stmt.excluded[k]
                    for k in (
                        "ordinal",
                        "entrant",
                        "stack",
                        "stack_ordinal",
                        "finishes",
                        "version",
                        "updated_at",
                    )
                },
                where=col(TournamentEntrantState.version) <= stmt.excluded.version,
            )
        )
    if delta.head is not None:
        await write_state(
            session,
            key=tournament_workflow_id(delta.tournament_id),
            kind="tournament",
            version=delta.version,
            public={"view": delta.head.model_dump(mode="json")},
        )


ENTRANT_PARTS = """(
    SELECT coalesce(jsonb_agg(jsonb_build_object(
        'player_id', e.player_id, 'ordinal', e.ordinal, 'entrant', e.entrant,
        'stack', e.stack, 'stack_ordinal', e.stack_ordinal, 'finishes', e.finishes)), '[]')
    FROM tournament_entrant_states e WHERE e.tournament_id = {tournament}
)"""
"""A tournament's entrant rows as one JSON array, to select beside its head in the same
statement (one snapshot: a publication's head and rows are committed together, so a read
never sees one without the other)."""


def tournament_view(public: dict[str, Any], parts: list[dict[str, Any]] | None) -> TournamentView:
    """A tournament's view from its stored head (``read_states.public``) and its entrant rows
    (``ENTRANT_PARTS``): what every reader serves (``wire.tournament_delta.compose``). A head
    stored before the view came in parts is a whole view, and reads as it is."""
    return compose(
        TournamentView.model_validate(public["view"]),
        [EntrantDelta.model_validate(part) for part in parts or []],
    )


async def read_tournament(db: Database, tournament_id: str) -> TournamentView | None:
    """The tournament's view as the store holds it (None: never written), in one read."""
    async with db.engine.connect() as conn:
        row = (
            await conn.execute(
                text(
                    "SELECT public, "
                    + ENTRANT_PARTS.format(tournament=":tournament")
                    + " FROM read_states WHERE key = :key"
                ),
                {"key": tournament_workflow_id(tournament_id), "tournament": tournament_id},
            )
        ).first()
    return None if row is None else tournament_view(row[0], row[1])


UPSERT_AND_NOTIFY = """
WITH written AS (
    INSERT INTO read_states AS r (key, kind, version, public, private, updated_at)
    VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6)
    ON CONFLICT (key) DO UPDATE SET
        kind = excluded.kind, version = excluded.version, public = excluded.public,
        private = excluded.private, updated_at = excluded.updated_at
    WHERE r.version <= excluded.version
    RETURNING 1
)
SELECT pg_notify($7, $8)
"""


async def write_state_now(
    db: Database,
    *,
    key: str,
    kind: str,
    version: int,
    public: dict[str, Any],
    private: dict[str, str] | None = None,
) -> None:
    """``write_state`` on its own, as one statement (one round trip, its own transaction):
    a table publishes once per decision, before the act's answer goes out, and the ORM's
    four round trips were a third of the act's time in the worker (docs/capacity.md)."""
    async with db.engine.connect() as conn:
        raw = await conn.get_raw_connection()
        driver: Any = raw.driver_connection
        await driver.execute(
            UPSERT_AND_NOTIFY,
            key,
            kind,
            version,
            json.dumps(public),
            json.dumps(private or {}),
            datetime.now(UTC),
            CHANNEL,
            f"{key} {version}",
        )


UPSERT_PUBLIC_AND_NOTIFY = """
WITH written AS (
    INSERT INTO read_states AS r (key, kind, version, public, private, updated_at)
    VALUES ($1, $2, $3, $4::jsonb, '{}'::jsonb, $5)
    ON CONFLICT (key) DO UPDATE SET
        kind = excluded.kind, version = excluded.version, public = excluded.public,
        private = CASE
            WHEN $6::boolean AND r.public->'view'->'hand_no' = excluded.public->'view'->'hand_no'
            THEN r.private ELSE '{}'::jsonb END,
        updated_at = excluded.updated_at
    WHERE r.version < excluded.version
        OR ($9::boolean AND r.version = excluded.version
            AND r.public IS DISTINCT FROM excluded.public)
    RETURNING r.version, r.private, r.updated_at
)
SELECT version, private, updated_at, true AS wrote, pg_notify($7, $8)::text FROM written
UNION ALL
SELECT version, private, updated_at, false, NULL FROM read_states
    WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM written)
"""


@dataclass(frozen=True, slots=True)
class StoredAnswer:
    """The row an act answer's write left: ``wrote`` (it notified) or found in its place."""

    version: int
    private: dict[str, str]
    updated_at: datetime
    wrote: bool


async def write_public_now(
    db: Database,
    *,
    key: str,
    kind: str,
    version: int,
    public: str,
    hand_runs: bool,
    rewrite: bool = True,
) -> StoredAnswer | None:
    """An act's answer written to the store (docs/read-model.md, "Act answers"), by the API
    replica that made the Update and by the worker that ran it: the public part (JSON),
    upserted by version (an older one changes nothing; the same version rewrites what the
    committed task answered, unless it holds that already) and a ``NOTIFY`` only when it was
    written, so the second writer of the same answer writes nothing and wakes nobody; one
    round trip. Returns what the row holds afterwards (None: no row).

    It carries no private part: a seat's hole cards do not change while a hand runs, and the
    hand's first decision published them sealed by local activity (``publish_table``), so the
    row keeps them while ``hand_runs`` and the stored row is of the same hand; otherwise
    (the hand is over, or the row is of another hand) there is none to keep.

    ``rewrite=False`` (the worker's write, made after its grace): a row of the same version
    is left as it is, so a lost task's late write never replaces what its retry wrote."""
    async with db.engine.connect() as conn:
        raw = await conn.get_raw_connection()
        driver: Any = raw.driver_connection
        row = await driver.fetchrow(
            UPSERT_PUBLIC_AND_NOTIFY,
            key,
            kind,
            version,
            public,
            datetime.now(UTC),
            hand_runs,
            CHANNEL,
            f"{key} {version}",
            rewrite,
        )
    if row is None:
        return None
    private = row["private"]
    return StoredAnswer(
        version=row["version"],
        private=dict(json.loads(private) if isinstance(private, str) else private),
        updated_at=row["updated_at"],
        wrote=row["wrote"],
    )


async def write_act_answer(
    db: Database, state: TableSnapshot, *, rewrite: bool = True
) -> StoredAnswer | None:
    """``write_public_now`` for the snapshot an act's answer carries
    (``TableActResult.state``), by both its writers. Its view is encoded once
    (``model_dump_json``, not a dict and then JSON). What it returns lets the API serve the
    answer from memory without reading the row back (``api/gamestate.py acted``).

    (The answer's own JSON cannot go to the store as received: the payload converter writes
    it camelCased, while the store holds the views by field name, as the durable publication
    writes them and the private parts' hand check reads them.)"""
    view = state.view
    return await write_public_now(
        db,
        key=state.key,
        kind="room" if view.room else "table",
        version=view.version,
        public=f'{{"view":{view.model_dump_json()},"legal":{json.dumps(state.legal)}}}',
        hand_runs=view.hand is not None and not view.hand.get("over", False),
        rewrite=rewrite,
    )
