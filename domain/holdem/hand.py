"""One No-Limit Hold'em hand: forced bets, the betting rounds, the deal and the result.

``Hand`` is plain data (ints, strs, bools, lists, dicts) so that ``to_dict()``/``from_dict()``
carry it through Temporal payloads and continue-as-new unchanged. It is mutated in place by its
rule methods — each rule is ``verify_x()`` (raises DomainError), ``can_x()`` and ``x()`` — and it
advances by itself between betting rounds: it deals the next street from its deck, runs the board
out when at most one live player has chips behind, and settles the pots at the end.

Players are indexed in the order they act after the flop (0 = first live seat left of the
button; heads-up that is the big blind). ``seats`` maps indices to table seat numbers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.errors import DomainError, ErrorCode
from domain.holdem import betting
from domain.holdem.betting import ActionKind, LegalActions
from domain.holdem.cards import board_indices, hole_card_index, verify_deck
from domain.holdem.evaluate import hand_strength
from domain.holdem.showdown import build_pots, showdown_order, split_pot

STREETS = ("preflop", "flop", "turn", "river")


@dataclass(slots=True)
class Hand:
    seats: list[int]
    starting_stacks: list[int]
    blinds: list[int]
    antes: list[int]
    min_bet: int
    deck: list[str]
    dead_antes: bool = False
    blind_before_ante: bool = False
    button: int | None = None
    # Everything below is derived by start() and the rule methods.
    stacks: list[int] = field(default_factory=list)
    bets: list[int] = field(default_factory=list)
    committed: list[int] = field(default_factory=list)
    posted_antes: list[int] = field(default_factory=list)
    posted_blinds: list[int] = field(default_factory=list)
    folded: list[bool] = field(default_factory=list)
    hole: list[list[str]] = field(default_factory=list)
    board: list[str] = field(default_factory=list)
    street: int = 0
    actors: list[int] = field(default_factory=list)
    acted: list[int] = field(default_factory=list)
    raise_amount: int = 0
    short_all_ins: list[int] = field(default_factory=list)
    aggressor: int | None = None
    turn: int = 0
    actions: list[dict[str, Any]] = field(default_factory=list)
    over: bool = False
    result: dict[str, Any] | None = None

    # ---- construction and serialisation -------------------------------------------------

    @classmethod
    def start(
        cls,
        *,
        seats: Sequence[int],
        stacks: Sequence[int],
        blinds: Sequence[int],
        antes: Sequence[int],
        min_bet: int,
        deck: Sequence[str],
        dead_antes: bool = False,
        blind_before_ante: bool = False,
        button: int | None = None,
    ) -> Hand:
        """Post the forced bets, deal the hole cards and open the preflop betting.

        Lists are indexed by player (see the module docstring). ``blind_before_ante`` posts a
        short player's blind before the ante (the big-blind-ante rule); ``dead_antes`` puts the
        antes in the main pot whoever can win the rest.
        """
        count = len(seats)
        if not 2 <= count <= 10:
            raise DomainError(ErrorCode.INVALID_STATE, "a hand needs 2 to 10 players")
        if len(set(seats)) != count or any(
            len(values) != count for values in (stacks, blinds, antes)
        ):
            raise DomainError(ErrorCode.INVALID_STATE, "one seat, stack, blind and ante each")
        if any(value < 0 for value in (*blinds, *antes)) or any(s <= 0 for s in stacks):
            raise DomainError(ErrorCode.INVALID_STATE, "stacks must be positive, bets not negative")
        if min_bet <= 0:
            raise DomainError(ErrorCode.INVALID_STATE, "the minimum bet must be positive")
        verify_deck(deck)
        hand = cls(
            seats=list(seats),
            starting_stacks=list(stacks),
            blinds=list(blinds),
            antes=list(antes),
            min_bet=min_bet,
            deck=list(deck),
            dead_antes=dead_antes,
            blind_before_ante=blind_before_ante,
            button=button,
        )
        hand._post_forced_bets()
        hand.hole = [
            [hand.deck[hole_card_index(i, k, count)] for k in (0, 1)] for i in range(count)
        ]
        hand._begin_betting()
        return hand

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data; ``Hand.from_dict(h.to_dict()) == h``."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Hand:
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise DomainError(ErrorCode.VALIDATION_ERROR, f"unknown hand fields {sorted(unknown)}")
        copied = {key: _deep_copy(value) for key, value in data.items()}
        return cls(**copied)

    # ---- questions ----------------------------------------------------------------------

    @property
    def player_count(self) -> int:
        return len(self.seats)

    @property
    def actor(self) -> int | None:
        """Index of the player to act, None between rounds or when the hand is over."""
        return self.actors[0] if self.actors and not self.over else None

    @property
    def actor_seat(self) -> int | None:
        actor = self.actor
        return None if actor is None else self.seats[actor]

    def index_of(self, seat: int) -> int:
        try:
            return self.seats.index(seat)
        except ValueError:
            raise DomainError(
                ErrorCode.UNKNOWN_SEAT, f"seat {seat} is not in this hand", field="seat"
            ) from None

    def legal_actions(self) -> LegalActions | None:
        actor = self.actor
        return None if actor is None else betting.legal_actions(self, actor)

    @property
    def pot_total(self) -> int:
        return sum(self.committed)

    # ---- the action rule ----------------------------------------------------------------

    def verify_action(self, seat: int, kind: ActionKind | str, amount: int | None = None) -> int:
        """Raise DomainError unless ``seat`` may take this action now; return the player index."""
        player = self.index_of(seat)
        if self.over or player != self.actor:
            raise DomainError(ErrorCode.NOT_YOUR_TURN, f"it is not seat {seat}'s turn")
        try:
            kind = ActionKind(kind)
        except ValueError:
            raise DomainError(ErrorCode.ILLEGAL_ACTION, f"unknown action {kind!r}") from None
        legal = betting.legal_actions(self, player)
        if kind not in legal.actions:
            reason = ""
            if kind in (ActionKind.RAISE, ActionKind.ALL_IN):
                reason = f": {betting.raise_refusal(self, player)}"
            allowed = ", ".join(legal.actions)
            raise DomainError(
                ErrorCode.ILLEGAL_ACTION, f"{kind} is not allowed now{reason} (legal: {allowed})"
            )
        if kind is ActionKind.RAISE:
            assert legal.min_raise_to is not None and legal.max_raise_to is not None
            if amount is None or not legal.min_raise_to <= amount <= legal.max_raise_to:
                raise DomainError(
                    ErrorCode.AMOUNT_OUT_OF_RANGE,
                    f"raise to {amount} is outside {legal.min_raise_to}-{legal.max_raise_to}",
                    field="amount",
                )
        return player

    def can_act(self, seat: int, kind: ActionKind | str, amount: int | None = None) -> bool:
        try:
            self.verify_action(seat, kind, amount)
        except DomainError:
            return False
        return True

    def act(self, seat: int, kind: ActionKind | str, amount: int | None = None) -> dict[str, Any]:
        """Apply one action; returns the logged action (with ``all_in`` resolved)."""
        player = self.verify_action(seat, kind, amount)
        return self._apply(player, seat, ActionKind(kind), amount)

    def act_verified(
        self, seat: int, kind: ActionKind | str, amount: int | None = None
    ) -> dict[str, Any]:
        """Apply an action already verified (``verify_action``) against this very state: the
        table's act validator checked it at this hand and turn, so only the turn is checked
        again here, not its legality (issue 30: legality once per action).

        >>> from domain.holdem.cards import ALL_CARDS
        >>> hand = Hand.start(seats=[0, 1], stacks=[100, 100], blinds=[1, 2], antes=[0, 0],
        ...                   min_bet=2, deck=ALL_CARDS)
        >>> small = hand.actor_seat
        >>> hand.act_verified(small, "call")["action"], hand.actor_seat == 1 - small
        ('call', True)
        >>> hand.can_act(small, "check")  # not the small blind's turn now
        False
        >>> try:
        ...     hand.act_verified(small, "check")
        ... except DomainError as err:
        ...     print(err.code.value)
        not_your_turn
        """
        player = self.index_of(seat)
        if self.over or player != self.actor:
            raise DomainError(ErrorCode.NOT_YOUR_TURN, f"it is not seat {seat}'s turn")
        return self._apply(player, seat, ActionKind(kind), amount)

    def fold_out(self, seat: int) -> dict[str, Any]:
        """The table folds ``seat`` on its turn, even where a check is free: the penalty for a
        second decision timeout in a row (seed 004; ``domain.holdem.timeouts``). A player's
        own fold stays refused where a check is free (``act``).

        >>> from domain.holdem.cards import ALL_CARDS
        >>> hand = Hand.start(seats=[0, 1], stacks=[100, 100], blinds=[1, 2], antes=[0, 0],
        ...                   min_bet=2, deck=ALL_CARDS)
        >>> small, big = hand.actor_seat, 1 - hand.actor_seat
        >>> _ = hand.act(small, "call")
        >>> hand.can_act(big, "fold"), hand.fold_out(big)["action"], hand.over
        (False, 'fold', True)
        """
        player = self.index_of(seat)
        if self.over or player != self.actor:
            raise DomainError(ErrorCode.NOT_YOUR_TURN, f"it is not seat {seat}'s turn")
        return self._apply(player, seat, ActionKind.FOLD, None)

    def _apply(
        self, player: int, seat: int, kind: ActionKind, amount: int | None
    ) -> dict[str, Any]:
        max_bet = max(self.bets)
        if kind is ActionKind.ALL_IN:
            if betting.raise_refusal(self, player) is None:
                kind, amount = ActionKind.RAISE, self.stacks[player] + self.bets[player]
            else:
                kind = ActionKind.CALL
        self.actors.pop(0)
        self.acted.append(player)
        if kind is ActionKind.FOLD:
            self.folded[player] = True
        elif kind in (ActionKind.CHECK, ActionKind.CALL):
            self._put_in(player, betting.to_call(self, player))
        else:
            assert amount is not None
            self._raise_to(player, amount, max_bet)
        entry = {
            "street": STREETS[self.street],
            "seat": seat,
            "action": str(kind),
            "amount": self.bets[player] if kind in (ActionKind.CALL, ActionKind.RAISE) else 0,
            "all_in": self.stacks[player] == 0 and kind is not ActionKind.FOLD,
        }
        self.actions.append(entry)
        self.turn += 1
        if not self.actors or self._live_count() <= 1:
            self._end_betting()
        return entry

    # ---- internals ----------------------------------------------------------------------

    def _put_in(self, player: int, chips: int) -> None:
        self.stacks[player] -= chips
        self.bets[player] += chips
        self.committed[player] += chips

    def _raise_to(self, player: int, amount: int, max_bet: int) -> None:
        increment = amount - max_bet
        self._put_in(player, amount - self.bets[player])
        count = self.player_count
        self.actors = [
            other
            for other in ((player + k) % count for k in range(1, count))
            if not self.folded[other] and self.stacks[other] > 0
        ]
        if increment >= self.raise_amount:
            self.acted = [player]
        self.raise_amount = max(self.raise_amount, increment)
        if self.stacks[player]:
            self.short_all_ins = []
        else:
            self.short_all_ins.append(increment)
        if sum(self.short_all_ins) >= self.raise_amount:
            self.short_all_ins = []
        self.aggressor = player

    def _live_count(self) -> int:
        return self.folded.count(False)

    def _post_forced_bets(self) -> None:
        count = self.player_count
        self.stacks = list(self.starting_stacks)
        self.bets = [0] * count
        self.committed = [0] * count
        self.posted_antes = [0] * count
        self.posted_blinds = [0] * count
        self.folded = [False] * count
        for i in range(count):
            if self.blind_before_ante:
                blind = min(self.blinds[i], self.stacks[i])
                ante = min(self.antes[i], self.stacks[i] - blind)
            else:
                ante = min(self.antes[i], self.stacks[i])
                blind = min(self.blinds[i], self.stacks[i] - ante)
            self.stacks[i] -= ante + blind
            self.committed[i] += ante + blind
            self.bets[i] = blind
            self.posted_antes[i] = ante
            self.posted_blinds[i] = blind

    def _effective_stack(self, player: int) -> int:
        totals = sorted(
            self.bets[i] + self.stacks[i] for i in range(self.player_count) if not self.folded[i]
        )
        if len(totals) < 2:
            return 0
        return min(self.stacks[player], max(0, totals[-2] - self.bets[player]))

    def _begin_betting(self) -> None:
        count = self.player_count
        # Preflop the player after the biggest blind opens; later streets, the first seat left
        # of the button (all bets are 0, so the same formula gives index 0).
        biggest = max(range(count), key=lambda i: (self.bets[i] if self.blinds[i] > 0 else 0, i))
        opener = (biggest + 1) % count
        self.actors = [
            i
            for i in ((opener + k) % count for k in range(count))
            if not self.folded[i] and self.stacks[i] > 0 and self._effective_stack(i) > 0
        ]
        self.raise_amount = 0
        self.acted = []
        self.short_all_ins = []
        self.aggressor = None
        if (
            not self.actors
            or self._live_count() <= 1
            or (len(self.actors) == 1 and self.bets[self.actors[0]] >= max(self.bets))
        ):
            self._end_betting()

    def _end_betting(self) -> None:
        self.actors = []
        if self._live_count() <= 1:
            self._finish()
            return
        with_chips = sum(
            1 for i in range(self.player_count) if not self.folded[i] and self.stacks[i] > 0
        )
        if with_chips <= 1 or self.street == 3:
            while self.street < 3:
                self._deal_street()
            self._finish()
            return
        self._deal_street()
        self._begin_betting()

    def _deal_street(self) -> None:
        self.street += 1
        self.bets = [0] * self.player_count
        self.board += [self.deck[k] for k in board_indices(self.street, self.player_count)]

    def _finish(self) -> None:
        live = [not folded for folded in self.folded]
        pots = build_pots(self.committed, self.posted_antes, live, dead_antes=self.dead_antes)
        showdown = self._live_count() > 1
        strengths: list[int | None] = [
            hand_strength(self.hole[i], self.board) if showdown and live[i] else None
            for i in range(self.player_count)
        ]
        won = [0] * self.player_count
        pot_records = []
        for pot in pots:
            if showdown:
                shares = split_pot(pot, strengths)
            else:
                shares = {pot.eligible[0] if pot.eligible else live.index(True): pot.amount}
            for i, share in shares.items():
                won[i] += share
            pot_records.append(
                {
                    "amount": pot.amount,
                    "eligible": [self.seats[i] for i in pot.eligible],
                    "winners": {str(self.seats[i]): share for i, share in shares.items()},
                }
            )
        shown: list[int] = []
        order: list[int] = []
        if showdown:
            order = showdown_order(live, self.aggressor)
            anyone_all_in = any(live[i] and self.stacks[i] == 0 for i in range(self.player_count))
            shown = [i for k, i in enumerate(order) if k == 0 or anyone_all_in or won[i] > 0]
        self.stacks = [stack + won[i] for i, stack in enumerate(self.stacks)]
        self.bets = [0] * self.player_count
        self.over = True
        self.result = {
            "pots": pot_records,
            "won": won,
            "showdown": showdown,
            "shown": shown,
            "showdown_order": order,
            "strengths": strengths,
        }


def _deep_copy(value: Any) -> Any:
    if isinstance(value, list):
        return [_deep_copy(item) for item in value]
    if isinstance(value, dict):
        return {key: _deep_copy(item) for key, item in value.items()}
    return value
