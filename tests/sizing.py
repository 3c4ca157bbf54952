"""A large MTT's state as the workflow would hold it midway (half the field out, the rest on
tables of nine), for payload-size checks and ``bench/sizes.py``."""

from __future__ import annotations

import random

from wire.messages import (
    EntrantStatus,
    EntrantView,
    Placing,
    TournamentPhase,
    TournamentState,
)
from wire.mtt import MttBooks, MttTable


def large_tournament_state(entrants: int, seats: int = 9, seed: int = 1) -> TournamentState:
    rnd = random.Random(seed)
    players = [f"user-{rnd.getrandbits(64):016x}" for _ in range(entrants)]
    alive = players[: entrants // 2]
    out = players[entrants // 2 :]
    live = set(alive)
    tables = {}
    for i in range(0, len(alive), seats):
        number = i // seats + 1
        tables[number] = MttTable(
            number=number,
            workflow_id=f"table-big-{number}",
            secret=f"{rnd.getrandbits(256):064x}",
            seats=dict(enumerate(alive[i : i + seats])),
            positions={"button": 0, "small_blind": 1, "big_blind": 2},
            hands=rnd.randrange(300),
        )
    return TournamentState(
        tournament_id="big",
        name="big",
        phase=TournamentPhase.PLAYING,
        entrants={
            p: EntrantView(
                player_id=p,
                owner_user_id=p,
                is_agent=True,
                status=EntrantStatus.PAID,
                seat=rnd.randrange(seats),
            )
            for p in players
        },
        field_size=entrants,
        stacks={p: rnd.randrange(1, 40_000) if p in live else 0 for p in players},
        finishes=[
            Placing(
                player_id=p,
                place=entrants - i,
                rank=entrants - i,
                hand_number=rnd.randrange(1, 3_000),
            )
            for i, p in enumerate(out)
        ],
        mtt=MttBooks(
            tables=tables, moves={p: 1 for p in players[: entrants // 4]}, boundaries=50_000
        ),
        version=123_456,
    )
