"""Leaderboard totals and the activity feed, kept from the publications themselves.

Each function here runs inside the transaction of the write it follows (a hand's history row,
an event's log row) and only when that write was new: the hand's ``(table_id, hand_no)`` and
the event's ``(stream, dedupe key)`` are the idempotency keys, so a retried activity adds
nothing twice. No request ever scans histories: the API reads the ``leaderboard`` table and
the feed's stream of the event log.

Definitions (docs/api.md, "Leaderboard" and "Activity feed"):

- ``hands_played``: hands the player was dealt into (tournament tables and cash rooms).
- ``biggest_pot``: the most chips the player took from the pots of one hand.
- ``net_chips``: in rooms, the sum of each hand's stack change (after minus before); in
  tournaments, prizes settled minus entry fees paid (the entry fee counts when the tournament
  ends, a prize when its payout settles). Tournament chips at a table are not money and do
  not count.
- ``tournaments_played``: tournaments the player finished (placed in the final standings);
  ``tournaments_itm``: those in which it finished in a paid place.
- a player is an agent when its id is an agent's id (``agents.agent_id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel.ext.asyncio.session import AsyncSession

from db.models import Event

FEED_STREAM = "~activity"
"""The feed's stream id in the event log: ``~`` is outside every tournament and room id's
alphabet (``api.deps.ID_PATTERN``), so no table's stream can share it."""
BIG_POT_BIG_BLINDS = 50
"""A hand's pots are "big" (a feed item) at this many big blinds or more."""
FEED_KEEP = 1000
"""The feed keeps its newest this many items; older ones are pruned as new ones land."""
_FEED_LOCK = 0x5EED_F00D
"""Advisory lock serialising feed appends until their commit, so the feed's ids commit in
order and a reader that has seen id n never later finds a smaller id appear."""

_ADD = text(
    """
    INSERT INTO leaderboard (player_id, is_agent, tournaments_played, tournaments_itm,
                             net_chips, hands_played, biggest_pot, updated_at)
    VALUES (CAST(:player AS VARCHAR),
            EXISTS (SELECT 1 FROM agents WHERE agent_id = CAST(:player AS VARCHAR)),
            :played, :itm, :net, :hands, :pot, now())
    ON CONFLICT (player_id) DO UPDATE SET
        tournaments_played = leaderboard.tournaments_played + excluded.tournaments_played,
        tournaments_itm = leaderboard.tournaments_itm + excluded.tournaments_itm,
        net_chips = leaderboard.net_chips + excluded.net_chips,
        hands_played = leaderboard.hands_played + excluded.hands_played,
        biggest_pot = greatest(leaderboard.biggest_pot, excluded.biggest_pot),
        updated_at = now()
    """
)


async def add(
    session: AsyncSession,
    player_id: str,
    *,
    played: int = 0,
    itm: int = 0,
    net: int = 0,
    hands: int = 0,
    pot: int = 0,
) -> None:
    """Add to one player's totals (``pot``: a candidate for its biggest pot)."""
    await session.exec(  # type: ignore[call-overload]
        _ADD,
        params={
            "player": player_id,
            "played": played,
            "itm": itm,
            "net": net,
            "hands": hands,
            "pot": pot,
        },
    )


async def feed(session: AsyncSession, type_: str, key: str, payload: dict[str, Any]) -> None:
    """Append one feed item (once per key) and prune the feed to its newest ``FEED_KEEP``.
    Call it last before the commit: it holds the feed's lock until then."""
    await session.exec(  # type: ignore[call-overload]
        text("SELECT pg_advisory_xact_lock(:lock)"), params={"lock": _FEED_LOCK}
    )
    await session.exec(
        insert(Event)
        .values(tournament_id=FEED_STREAM, type=type_, dedupe_key=key, payload=payload)
        .on_conflict_do_nothing(index_elements=["tournament_id", "dedupe_key"])
    )
    await session.exec(  # type: ignore[call-overload]
        text(
            "DELETE FROM events WHERE tournament_id = :feed AND id <= ("
            " SELECT id FROM events WHERE tournament_id = :feed"
            " ORDER BY id DESC OFFSET :keep LIMIT 1)"
        ),
        params={"feed": FEED_STREAM, "keep": FEED_KEEP},
    )


async def hand_settled(
    session: AsyncSession, record: Mapping[str, Any], *, where: dict[str, Any], room: bool
) -> None:
    """A hand recorded for the first time: its players' totals, and a feed item if its pots
    reached ``BIG_POT_BIG_BLINDS`` big blinds. ``where`` names the table for the feed item
    (``tournamentId`` or ``roomId``, ``tableId``, ``handNumber``)."""
    players: dict[str, str] = {str(s): str(p) for s, p in record.get("players", {}).items()}
    seats = [str(s) for s in record.get("seats", [])]
    if not players or not seats:
        return  # a force-end's pseudo-hand, or a record without its players
    won: dict[str, int] = {}
    for pot in record.get("pots", []):
        for seat, share in pot.get("winners", {}).items():
            won[str(seat)] = won.get(str(seat), 0) + int(share)
    before = record.get("stacks_before", {})
    after = record.get("stacks_after", {})
    for seat in sorted(seats, key=lambda s: players.get(s, "")):  # one lock order: no deadlock
        player = players.get(seat)
        if player is None:
            continue
        net = int(after.get(seat, 0)) - int(before.get(seat, 0)) if room else 0
        await add(session, player, hands=1, net=net, pot=won.get(seat, 0))
    gross = sum(int(pot.get("amount", 0)) for pot in record.get("pots", []))
    big_blind = int(record.get("big_blind") or 0)
    if big_blind > 0 and gross >= BIG_POT_BIG_BLINDS * big_blind:
        winners = sorted({players[s] for s in won if s in players and won[s] > 0})
        key = f"big_pot:{where['tableId']}:{where['handNumber']}"
        await feed(
            session,
            "big_pot",
            key,
            {**where, "pot": gross, "bigBlind": big_blind, "winners": winners},
        )


def _get(data: Mapping[str, Any], camel: str, snake: str) -> Any:
    return data.get(camel, data.get(snake))


async def event_published(
    session: AsyncSession, stream: str, type_: str, key: str, payload: Mapping[str, Any]
) -> None:
    """An event logged for the first time: what it changes on the leaderboard and the feed."""
    if type_ == "tournament_state_changed" and payload.get("state") == "playing":
        await feed(
            session,
            "tournament_started",
            f"started:{stream}",
            {"tournamentId": stream},
        )
    elif type_ == "player_eliminated":
        await feed(
            session,
            "player_eliminated",
            f"eliminated:{stream}:{key}",
            {
                "tournamentId": stream,
                "playerId": _get(payload, "playerId", "player_id"),
                "place": payload.get("place"),
                "rank": payload.get("rank"),
                "handNumber": _get(payload, "handNumber", "hand_number"),
            },
        )
    elif type_ == "tournament_ended":
        fee = await session.exec(  # type: ignore[call-overload]
            text("SELECT entry_fee FROM tournaments WHERE id = :id"), params={"id": stream}
        )
        entry_fee = int(fee.scalar() or 0)
        paid = {
            str(_get(prize, "userId", "user_id"))
            for prize in payload.get("payouts", [])
            if int(prize.get("amount", 0)) > 0
        }
        standings = sorted(
            str(_get(p, "playerId", "player_id"))
            for p in _get(payload, "finalStandings", "final_standings") or []
        )
        for player in standings:
            await add(session, player, played=1, itm=int(player in paid), net=-entry_fee)
    elif type_ == "tournament_payout_settled":
        player = str(_get(payload, "userId", "user_id"))
        amount = int(payload.get("amount", 0))
        await add(session, player, net=amount)
        await feed(
            session,
            "payout_settled",
            f"payout:{stream}:{key}",
            {
                "tournamentId": stream,
                "playerId": player,
                "position": payload.get("position"),
                "amount": amount,
            },
        )
