"""The table's dealer: each hand's deck, under the fairness protocol (docs/fairness.md).

Each hand's deck is shuffled from a secret made by an activity (never ``workflow.random()``).
From the ``deck-v2`` patch on the dealer commits to the next hand's cards a hand ahead (one
salted commitment per position, a Merkle root), takes the seats' seeds for it until it deals
it, deals in the order the seeds fix, and reveals only the board and the cards shown down,
each with its opening; each seat gets its own cards' openings, and the records form a hash
chain. Before the patch the deck's SHA-256 commitment was public from the deal and its seed
revealed with the record. The hand loop (workflows/hand_loop.py) asks it for a hand's cards
(``deal``) and for the record's reveal (``reveal``); the seed Update is its own
(``verify_seed``, ``take_seed``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from core import deck_vault
    from domain import deck as decks
    from domain import fairness
    from domain.errors import DomainError, ErrorCode
    from domain.holdem import Hand
    from wire.game_state import HandRecord
    from wire.table_messages import (
        DeckDraw,
        HandLoopState,
        PendingDeck,
        SeedInput,
        SeedResult,
    )
    from workflows import effects
    from workflows.errors import refusal

DECK_PATCH = "deck-v2"
"""Card commitments, the players' seeds and reveal-only-what-is-shown (docs/fairness.md)."""

DECK_KEY_PATCH = "deck-key-v1"
"""A deck draw must come sealed under the worker-only deck key, for the table and hand it was
asked for (core/deck_vault.py): a plain or misaddressed secret is refused."""

LOCAL_DRAW_PATCH = "deck-local-v1"
"""A hand's deck is drawn by local activity (one marker event) instead of an activity (three
events and a workflow task of their own), and the hand's time, at which its blinds are read,
is ``workflow.now()`` where the table asks for the draw (a local activity's own time is the
worker's clock, which Temporal's time skipping does not move). The draw is no wait, so a
tournament table reads a stop in the pause between hands and at the first decision instead
(docs/durability.md, rule 9). Decided once at each run's start (``HandLoop.begin_run``,
which asks the loop's later patches there too)."""


def _sealed_for(draw: DeckDraw, table_hand: str) -> DeckDraw:
    """The draw, once it is known to come from a worker holding the deck key (``DECK_KEY_PATCH``):
    sealed, for this table and hand. Anything else fails the workflow task (retried, visible in
    the UI) rather than deal from a secret someone else chose."""
    if workflow.patched(DECK_KEY_PATCH) and (not draw.sealed or draw.drawn_for != table_hand):
        raise RuntimeError(f"refused a deck draw not sealed for {table_hand} (docs/fairness.md)")
    return draw


def _secret_hex(sealed: str, drawn_for: str, plain: str) -> str:
    """A deck's secret (hex), opened in memory under the worker's deck key when sealed."""
    return deck_vault.current().open(sealed, drawn_for).hex() if sealed else plain


def _now_ms() -> int:
    return int(workflow.now().timestamp() * 1000)


class Dealt:
    """The running hand's deck under ``deck-v2``: the committed deck, the dealing order the
    seeds gave, the seeds, and when the root was published."""

    def __init__(
        self,
        deck: fairness.CommittedDeck,
        order: list[int],
        seeds: dict[int, str],
        committed_ms: int,
    ) -> None:
        self.deck, self.order, self.seeds, self.committed_ms = deck, order, seeds, committed_ms


class Dealer:
    """One table's decks: drawn, committed, dealt and revealed (the pending deck and the
    record chain's head are carried in ``state``; the running hand's deck in memory only)."""

    def __init__(self, state: HandLoopState, stop_requested: Callable[[], bool]) -> None:
        """``stop_requested``: whether the table was told to stop (a tournament's force-end)."""
        self.state = state
        self.stop_requested = stop_requested
        # The running hand's public commitment (a root under ``deck-v2``, else a SHA-256).
        self.commitment: str | None = None
        self.dealt: Dealt | None = None
        # The running hand's seed, revealed with its record by tables dealing as before deck-v2.
        self.seed_hex = ""
        # Set at the run's start (``HandLoop.begin_run``): ``STOP_PATCH`` and ``LOCAL_DRAW_PATCH``.
        self.stop_at_waits = False
        self.local_draw = False

    async def draw(self, table_hand: str) -> DeckDraw | None:
        """A deck draw; under ``STOP_PATCH`` None instead when a stop came while it ran. The
        draw's result is taken first when both came: a stop that came after it found the
        hand dealt and its first decision begun (docs/durability.md, rule 9)."""
        if self.local_draw:
            return await self._draw_locally(table_hand)
        if not self.stop_at_waits:
            return _sealed_for(await effects.draw_deck(table_hand), table_hand)
        draw = effects.start_draw_deck(table_hand)
        await workflow.wait_condition(lambda: draw.done() or self.stop_requested())
        if draw.done():
            return _sealed_for(await draw, table_hand)
        return None

    async def _draw_locally(self, table_hand: str) -> DeckDraw:
        """``LOCAL_DRAW_PATCH``: the draw by local activity, stamped with the time the table
        asked for it (``workflow.now()``: the workflow task's start on Temporal's clock, the
        same on replay; the local activity's own time is the worker's clock).

        A stop is not read here: the draw runs inside the workflow task that asked for it
        (sdk-core holds the task until it resolves), so it is no wait, and a stop that came
        with that task's input or during the draw is read at the hand's first decision, which
        voids the hand, or in the pause before the next draw (``pause_between_hands``;
        docs/durability.md, rules 4 and 9). The commands are then the same whether the stop
        came with the task that drew or after it."""
        drawn_at_ms = _now_ms()
        draw = _sealed_for(await effects.local_draw_deck(table_hand), table_hand)
        return draw.model_copy(update={"drawn_at_ms": drawn_at_ms})

    async def deal(self, hand_no: int, draw: DeckDraw, live: list[int]) -> list[str] | None:
        """The cards hand ``hand_no`` deals to the seats ``live``, from ``draw`` (the deck
        drawn for it); None when a stop came during a second draw (``STOP_PATCH``)."""
        self.seed_hex = ""
        if workflow.patched(DECK_PATCH):
            return await self._deal_committed(hand_no, draw, live)
        self.dealt = None
        self.seed_hex = _secret_hex(draw.sealed, draw.drawn_for, draw.seed)
        self.commitment = decks.commitment(bytes.fromhex(self.seed_hex))
        return decks.shuffled_deck(bytes.fromhex(self.seed_hex))

    async def _deal_committed(
        self, hand_no: int, draw: DeckDraw, live: list[int]
    ) -> list[str] | None:
        """The cards this hand deals (``deck-v2``): the deck committed a hand ahead, in the
        order the dealt seats' seeds fix. The secret just drawn becomes the next hand's deck,
        whose root goes out with the next publication; seeds for it are taken until it is
        dealt (``take_seed``). A table's first hand had no root out before it: it is dealt
        from the secret just drawn, with no seeds, and a second draw commits the next."""
        pending = self.state.next_deck
        if pending is None or pending.hand_number != hand_no:
            pending = self._pending(hand_no, draw)
            second = await self.draw(f"{self.state.table_id}:{hand_no + 1}")
            if second is None:
                return None
            draw = second
        deck = fairness.commit(
            bytes.fromhex(_secret_hex(pending.sealed, pending.drawn_for, pending.secret))
        )
        seeds = {seat: seed for seat, seed in pending.seeds.items() if seat in live}
        cards, order = fairness.dealt_deck(
            deck, {seat: bytes.fromhex(seed) for seat, seed in seeds.items()}
        )
        self.dealt = Dealt(deck, order, seeds, pending.committed_ms)
        self.commitment = deck.root_hex
        self.state.next_deck = self._pending(hand_no + 1, draw)
        return cards

    def _pending(self, hand_number: int, draw: DeckDraw) -> PendingDeck:
        """The next deck, its secret kept sealed (plain only from draws made before the deck
        key, core/deck_vault.py) and opened here just to publish its root."""
        secret_hex = _secret_hex(draw.sealed, draw.drawn_for, draw.seed)
        return PendingDeck(
            hand_number=hand_number,
            secret="" if draw.sealed else secret_hex,
            sealed=draw.sealed,
            drawn_for=draw.drawn_for,
            root=fairness.commit(bytes.fromhex(secret_hex)).root_hex,
            committed_ms=_now_ms(),  # a stamp for the record, never a decision
        )

    def void(self) -> None:
        """A stop abandoned the running hand: its deck is forgotten."""
        self.dealt = None

    def reveal(self, hand: Hand, record: dict[str, Any]) -> None:
        """What the finished hand's record reveals. Under ``deck-v2`` the board and the hands
        shown down, with their openings, linked to the table's last record; each seat's own
        hole cards and their openings go in ``private`` (sealed for that seat when stored,
        never served to anyone else). Nothing reveals the deck's secret, a folded hand or an
        undealt card. Before it, the deck's seed."""
        dealt = self.dealt
        if dealt is None:
            record["deck_seed"] = self.seed_hex
            return
        record["private"] = fairness.publish(
            record,
            dealt.deck,
            dealt.order,
            seats=hand.seats,
            seeds=dealt.seeds,
            committed_ms=dealt.committed_ms,
            prev_hash=self.state.chain_head,
            served=lambda r: HandRecord.model_validate(r).to_wire(),
        )
        self.state.chain_head = record["hash"]
        self.dealt = None  # the deck's secret (in memory only) is not kept past its hand

    # -- the seed Update ---------------------------------------------------------------------
    def verify_seed(self, inp: SeedInput) -> int:
        """A seed answers the next hand's committed root, from a seated player, once."""
        try:
            seat = next((s.seat for s in self.state.seats if s.player_id == inp.player_id), None)
            if seat is None:
                raise DomainError(ErrorCode.UNKNOWN_SEAT, "you have no seat at this table")
            pending = self.state.next_deck
            if pending is None:
                raise DomainError(
                    ErrorCode.INVALID_STATE, "this table has no deck committed for its next hand"
                )
            if inp.hand_number == pending.hand_number and seat in pending.seeds:
                # First: whatever else this request gets wrong, the seat's seed is in.
                raise DomainError(
                    ErrorCode.ALREADY_SEEDED, f"seat {seat} already seeded hand {inp.hand_number}"
                )
            if inp.hand_number != pending.hand_number or inp.commitment.lower() != pending.root:
                raise DomainError(
                    ErrorCode.STALE_COMMITMENT,
                    f"that seed answers hand {inp.hand_number}'s deck {inp.commitment!r}; the"
                    f" next hand is {pending.hand_number}, committed to {pending.root}",
                    field="commitment",
                )
            fairness.check_player_seed(inp.seed)
        except DomainError as err:
            raise refusal(err) from None
        return seat

    def take_seed(self, inp: SeedInput) -> SeedResult:
        """Record the seed in the pending deck: the deal reads it there (handlers record,
        the loop acts). No version bump: what the loop publishes, and when, stays the
        loop's (docs/durability.md, rule 8); the next publication shows the seat seeded."""
        seat = self.verify_seed(inp)
        pending = self.state.next_deck
        assert pending is not None
        pending.seeds[seat] = inp.seed.lower()
        return SeedResult(hand_number=pending.hand_number, commitment=pending.root, seat=seat)
