"""What must hold after any fault: chips, money, and exactly-once payouts."""

from __future__ import annotations

from sqlalchemy import text

from db import ledger
from db.engine import Database
from wire.messages import TournamentView


async def check_tournament(
    db: Database, view: TournamentView, *, entry_fee: int, stack: int
) -> None:
    tid = view.tournament_id
    field = view.field_size or 0
    assert view.state == "closed", view.state
    assert sum(view.stacks.values()) == field * stack
    assert [f.place for f in view.standings] == list(range(1, field + 1))
    assert sum(p.amount for p in view.payouts) == field * entry_fee - view.rake_total
    assert all(p.status == "confirmed" for p in view.payouts)
    # Every paid entry is seated or refunded, every chip of the escrow paid out.
    assert await ledger.balance(db, ledger.escrow_account(tid)) == 0
    async with db.engine.connect() as conn:
        # Exactly once: one two-legged posting per payout intent, and one intent per place.
        legs = (
            await conn.execute(
                text(
                    "SELECT posting_key, count(*) FROM ledger_entries WHERE posting_key LIKE :k"
                    " GROUP BY posting_key"
                ),
                {"k": f"payout:{tid}:%"},
            )
        ).all()
        assert sorted(k for k, _ in legs) == sorted(f"payout:{p.intent_id}" for p in view.payouts)
        assert all(n == 2 for _, n in legs)
        intents = (
            await conn.execute(
                text(
                    "SELECT position, amount, status FROM payout_intents WHERE tournament_id = :t"
                    " ORDER BY position"
                ),
                {"t": tid},
            )
        ).all()
        assert [(r.position, r.amount, r.status) for r in intents] == [
            (p.position, p.amount, "confirmed") for p in view.payouts
        ]
        # Chips conserved at every recorded hand boundary.
        hands = (
            await conn.execute(
                text("SELECT hand_no, record FROM hands WHERE tournament_id = :t AND hand_no > 0"),
                {"t": tid},
            )
        ).all()
        assert len(hands) == view.hands_played
        for hand_no, record in hands:
            # Busted seats are not dealt in, so the dealt stacks hold every chip.
            assert sum(record["stacks_after"].values()) == field * stack, hand_no
    assert await ledger.total(db) == 0
