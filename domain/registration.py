"""Who may take a seat in a tournament: the audience gate, the CoPilot advisor rules, capacity,
and the entry rules (register, pay, leave, cancel) over the tournament's entrants.

Each rule is a ``verify_*`` function that raises :class:`DomainError` with the seed system's
code, so the workflow validator, the API and the admin pages refuse in the same words. The
entry rules read plain data: the entrants are anything with an :class:`Entry`'s fields (the
workflow passes its ``EntrantView`` rows), the request anything with a request's fields, and
the clock is an argument (``None``: skip the rule that reads it). The tournament workflow calls
them from its Update validators and again from its registration loop (docs/durability.md,
rule 1).

The examples use ``_example_field()``: ``p1`` has paid, ``p2`` holds a reserve, ``p3`` left.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Protocol, TypeVar

from domain.errors import DomainError, ErrorCode
from domain.settings import TableKind

MAX_ENTRIES = 5
"""Registrations one player may make in one tournament (each leave and come back is one)."""
RESERVED, PAID, RELEASED = "reserved", "paid", "released"
"""An entrant's statuses (``wire.messages.EntrantStatus`` spells the same strings)."""
REGISTERING = "registering"
NO_STAND_UP = frozenset({"playing", "ended", "settling"})
"""The phases in which a seated player may not stand up (the seed's stand-up rejection)."""


class Entry(Protocol):
    """What the rules read of an entrant."""

    @property
    def player_id(self) -> str: ...
    @property
    def owner_user_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def entry_no(self) -> int: ...
    @property
    def released_at_ms(self) -> int | None: ...
    @property
    def reserved_until_ms(self) -> int | None: ...
    @property
    def advisor_agent_id(self) -> str | None: ...
    @property
    def paying(self) -> bool: ...
    @property
    def wallet(self) -> str | None: ...


class Registrant(Protocol):
    """What the rules read of a register request."""

    @property
    def player_id(self) -> str: ...
    @property
    def owner_user_id(self) -> str: ...
    @property
    def is_agent(self) -> bool: ...
    @property
    def advisor_agent_id(self) -> str | None: ...
    @property
    def advisor_owner_user_id(self) -> str | None: ...
    @property
    def advisor_skills(self) -> Sequence[str]: ...


class Permit(Protocol):
    @property
    def owner(self) -> str: ...
    @property
    def value(self) -> int: ...


class Payment(Protocol):
    """What the rules read of a pay request."""

    @property
    def player_id(self) -> str: ...
    @property
    def amount(self) -> int: ...
    @property
    def permit(self) -> Permit | None: ...


class Leaving(Protocol):
    """What the rules read of an unregister request (``via``: leave, stand_up or internal)."""

    @property
    def player_id(self) -> str: ...
    @property
    def via(self) -> str: ...


EntryT = TypeVar("EntryT", bound=Entry)


def _example_field() -> dict[str, SimpleNamespace]:
    """The doctests' field: ``p1`` has paid (from wallet 0xaa), ``p2`` holds a reserve until
    120 s, ``p3`` left at 50 s after its second entry."""

    def entry(player: str, status: str, **more: object) -> SimpleNamespace:
        fields: dict[str, object] = {
            "entry_no": 1,
            "released_at_ms": None,
            "reserved_until_ms": None,
            "advisor_agent_id": None,
            "paying": False,
            "wallet": None,
        }
        owner = "u" + player[1:]
        return SimpleNamespace(
            player_id=player, owner_user_id=owner, status=status, **{**fields, **more}
        )

    return {
        "p1": entry("p1", PAID, wallet="0xaa"),
        "p2": entry("p2", RESERVED, reserved_until_ms=120_000),
        "p3": entry("p3", RELEASED, entry_no=2, released_at_ms=50_000),
    }


def taken(entrants: Mapping[str, Entry]) -> int:
    """The seats held: reserved and paid entries.

    >>> field = _example_field()
    >>> taken(field)
    2
    """
    return sum(1 for e in entrants.values() if e.status != RELEASED)


def verify_registering(phase: str) -> None:
    """Registering is the only phase that takes registrations, payments and leaves.

    >>> verify_registering("playing")
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: tournament is playing, not registering
    """
    if phase != REGISTERING:
        raise DomainError(
            ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION, f"tournament is {phase}, not registering"
        )


def active_entry(entrants: Mapping[str, EntryT], player_id: str) -> EntryT:
    """The player's entry, reserved or paid.

    >>> field = _example_field()
    >>> active_entry(field, "p2").status
    'reserved'
    >>> active_entry(field, "p3")
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: not registered here
    """
    entry = entrants.get(player_id)
    if entry is None or entry.status == RELEASED:
        raise DomainError(ErrorCode.TOURNAMENT_NOT_REGISTERED, "not registered here")
    return entry


def verify_register(
    req: Registrant,
    entrants: Mapping[str, Entry],
    *,
    phase: str,
    kind: TableKind | str,
    seats: int,
    now_ms: int | None,
    cooldown_seconds: int,
    taken_now: int | None = None,
) -> None:
    """May ``req`` take a seat? ``now_ms``: also the come-back cooldown, which reads the clock,
    so only the validator passes it (a validator is never replayed; the loop decides from
    state alone and passes ``None``). ``taken_now``: the entries the field holds already,
    when that is not one per entrant (late registration counts every entry, busted and
    re-entered).

    >>> from types import SimpleNamespace as E
    >>> field = _example_field()
    >>> ask = E(player_id="p4", owner_user_id="u4", is_agent=False, advisor_agent_id=None,
    ...         advisor_owner_user_id=None, advisor_skills=[])
    >>> rules = dict(phase="registering", kind="open", now_ms=0, cooldown_seconds=10)
    >>> verify_register(ask, field, seats=3, **rules)
    >>> verify_register(ask, field, seats=2, **rules)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: all 2 seats are taken
    >>> verify_register(E(**{**vars(ask), "owner_user_id": "u1"}), field, seats=3, **rules)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: your account already holds an entry here (as p1)

    ``p3`` left at 50 s after its second entry: its next one waits 10 s.

    >>> back = E(**{**vars(ask), "player_id": "p3", "owner_user_id": "u3"})
    >>> verify_register(back, field, seats=3, **{**rules, "now_ms": 55_000})
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: you left this tournament just now: register again in 5 s
    >>> verify_register(back, field, seats=3, **{**rules, "now_ms": None})
    """
    verify_registering(phase)
    current = entrants.get(req.player_id)
    if current is not None and current.status != RELEASED:
        raise DomainError(
            ErrorCode.TOURNAMENT_ALREADY_REGISTERED, "already registered for this tournament"
        )
    holder = next(
        (
            e
            for e in entrants.values()
            if e.owner_user_id == req.owner_user_id
            and e.player_id != req.player_id
            and e.status != RELEASED
        ),
        None,
    )
    if holder is not None:
        # One entry per owner, whichever identity holds it (security review M2: an owner
        # with several agents held several seats at one table).
        raise DomainError(
            ErrorCode.TOURNAMENT_ALREADY_REGISTERED,
            f"your account already holds an entry here (as {holder.player_id})",
        )
    if current is not None and current.entry_no >= MAX_ENTRIES:
        raise DomainError(
            ErrorCode.TOURNAMENT_REGISTRATION_LIMIT,
            f"at most {MAX_ENTRIES} registrations per player in one tournament",
        )
    if (
        now_ms is not None
        and current is not None
        and current.released_at_ms is not None
        and current.entry_no >= 2
    ):
        # The first come-back is immediate (the seed's promise after an explicit
        # unregister); each later one waits the cooldown, doubling: 10 s, 20 s, 40 s.
        cooldown_ms = cooldown_seconds * 1000 * 2 ** (current.entry_no - 2)
        wait_ms = current.released_at_ms + cooldown_ms - now_ms
        if wait_ms > 0:
            seconds = -(-wait_ms // 1000)
            raise DomainError(
                ErrorCode.TOURNAMENT_REGISTRATION_COOLDOWN,
                f"you left this tournament just now: register again in {seconds} s",
                retry_after_seconds=seconds,
            )
    verify_seat_allowed(kind, is_agent=req.is_agent)
    if req.advisor_agent_id is not None or kind == "copilot":
        verify_advisor(
            kind,
            req.advisor_agent_id,
            advisor_owner_user_id=req.advisor_owner_user_id,
            advisor_skills=frozenset(req.advisor_skills),
            registrant_user_id=req.owner_user_id,
            advisors_in_use=frozenset(
                e.advisor_agent_id
                for e in entrants.values()
                if e.advisor_agent_id and e.status != RELEASED
            ),
        )
    verify_capacity(seats, taken(entrants) if taken_now is None else taken_now)


def verify_re_entry(*, paid_entries: int, alive: bool, max_re_entries: int) -> None:
    """May a player who has paid ``paid_entries`` entries of a running MTT enter again, while
    its late registration is open? Only once busted (``alive``: their entry still has chips),
    and at most ``max_re_entries`` times (docs/mtt.md, "Late registration and re-entry").

    >>> verify_re_entry(paid_entries=1, alive=False, max_re_entries=1)
    >>> verify_re_entry(paid_entries=1, alive=True, max_re_entries=1)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: your entry is still in play: re-entry is for a busted entry
    >>> verify_re_entry(paid_entries=2, alive=False, max_re_entries=1)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: at most 1 re-entry per player in this tournament
    >>> verify_re_entry(paid_entries=1, alive=False, max_re_entries=0)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: this tournament takes no re-entries
    """
    if alive:
        raise DomainError(
            ErrorCode.TOURNAMENT_ALREADY_REGISTERED,
            "your entry is still in play: re-entry is for a busted entry",
        )
    if max_re_entries == 0:
        raise DomainError(
            ErrorCode.TOURNAMENT_ALREADY_REGISTERED, "this tournament takes no re-entries"
        )
    if paid_entries - 1 >= max_re_entries:
        plural = "re-entry" if max_re_entries == 1 else "re-entries"
        raise DomainError(
            ErrorCode.TOURNAMENT_REGISTRATION_LIMIT,
            f"at most {max_re_entries} {plural} per player in this tournament",
        )


def verify_reserve_alive(entry: Entry, now_ms: int) -> None:
    """A reserve past its time is gone, even before the workflow's alarm releases it
    (security review L8). It reads the clock: the workflow checks it in the validator only.

    >>> field = _example_field()
    >>> verify_reserve_alive(field["p2"], 120_000)
    >>> verify_reserve_alive(field["p2"], 120_001)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: your reserve expired: register again, then pay
    """
    until = entry.reserved_until_ms
    expired = until is not None and now_ms > until
    if entry.status == RESERVED and expired:
        raise DomainError(
            ErrorCode.TOURNAMENT_NOT_REGISTERED, "your reserve expired: register again, then pay"
        )


def verify_pay(
    req: Payment, entrants: Mapping[str, Entry], *, phase: str, entry_fee: int, on_chain: bool
) -> None:
    """May ``req`` pay the entry? Exactly the fee, once, and on chain from a wallet no other
    active entrant pays from.

    >>> from types import SimpleNamespace as E
    >>> field = _example_field()
    >>> verify_pay(E(player_id="p2", amount=100, permit=None), field, phase="registering",
    ...            entry_fee=100, on_chain=False)
    >>> verify_pay(E(player_id="p2", amount=90, permit=None), field, phase="registering",
    ...            entry_fee=100, on_chain=False)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: the entry fee is exactly 100, not 90
    >>> verify_pay(E(player_id="p2", amount=100, permit=E(owner="0xAA", value=100)), field,
    ...            phase="registering", entry_fee=100, on_chain=True)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: this wallet already pays for another entrant of this tournament
    """
    verify_registering(phase)
    entry = active_entry(entrants, req.player_id)
    if entry.status == PAID:
        raise DomainError(ErrorCode.TOURNAMENT_ALREADY_REGISTERED, "the entry is already paid")
    if entry.paying:
        raise DomainError(ErrorCode.INVALID_STATE, "a payment for this entry is in progress")
    if req.amount != entry_fee:
        raise DomainError(
            ErrorCode.TOURNAMENT_ENTRY_FEE_MISMATCH,
            f"the entry fee is exactly {entry_fee}, not {req.amount}",
            field="amount",
        )
    if on_chain:
        if req.permit is None:
            raise DomainError(
                ErrorCode.VALIDATION_ERROR,
                "an on-chain entry needs a signed permit for the vault",
                field="permit",
            )
        if req.permit.value != entry_fee:
            raise DomainError(
                ErrorCode.TOURNAMENT_ENTRY_FEE_MISMATCH,
                f"the permit is for {req.permit.value}, the entry fee is {entry_fee}",
                field="permit.value",
            )
        owner = req.permit.owner.lower()
        if any(
            e.wallet is not None
            and e.wallet.lower() == owner
            and e.player_id != req.player_id
            and e.status != RELEASED
            for e in entrants.values()
        ):
            # One wallet per active entrant: the vault holds deposits per (tournament,
            # wallet), so a second entrant naming a paid wallet would look paid for free
            # (security review C1).
            raise DomainError(
                ErrorCode.VALIDATION_ERROR,
                "this wallet already pays for another entrant of this tournament",
                field="permit.owner",
            )


def verify_unregister(req: Leaving, entrants: Mapping[str, Entry], *, phase: str) -> None:
    """May ``req`` leave? A reserve or a paid entry while registering; a standing up once play
    began is refused with its own code, and a paid entry is not the internal leg's.

    >>> from types import SimpleNamespace as E
    >>> field = _example_field()
    >>> verify_unregister(E(player_id="p1", via="leave"), field, phase="registering")
    >>> verify_unregister(E(player_id="p1", via="stand_up"), field, phase="playing")
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: no standing up while the tournament is playing: play until you \
bust or win
    >>> verify_unregister(E(player_id="p1", via="internal"), field, phase="registering")
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: a paid entry is refunded through the refund path, not unregistered
    """
    if req.via == "stand_up" and phase in NO_STAND_UP:
        raise DomainError(
            ErrorCode.STAND_UP_NOT_ALLOWED_IN_TOURNAMENT,
            f"no standing up while the tournament is {phase}: play until you bust or win",
        )
    verify_registering(phase)
    entry = active_entry(entrants, req.player_id)
    if entry.paying:
        raise DomainError(
            ErrorCode.INVALID_STATE, "your payment is in progress: leave once it is done"
        )
    if req.via == "internal" and entry.status == PAID:
        raise DomainError(
            ErrorCode.PAID_REGISTRATION_USE_REFUND_PATH,
            "a paid entry is refunded through the refund path, not unregistered",
        )


def verify_cancel(phase: str) -> None:
    """An operator cancels a tournament only while it registers.

    >>> verify_cancel("starting")
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: only a registering tournament can be cancelled, not a starting one
    """
    if phase != REGISTERING:
        raise DomainError(
            ErrorCode.INVALID_STATE,
            f"only a registering tournament can be cancelled, not a {phase} one",
        )


def verify_seat_allowed(kind: TableKind | str, *, is_agent: bool) -> None:
    """The audience gate cash tables and tournaments share (the seed's assertSeatAllowed).

    >>> verify_seat_allowed("agent", is_agent=True)
    >>> verify_seat_allowed("agent", is_agent=False)
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: humans are not allowed at an agent table
    """
    kind = TableKind(kind)
    if kind is TableKind.AGENT and not is_agent:
        raise DomainError(
            ErrorCode.HUMANS_NOT_ALLOWED_AT_AGENT_TABLE, "humans are not allowed at an agent table"
        )
    if kind in (TableKind.HUMAN_ONLY, TableKind.COPILOT) and is_agent:
        raise DomainError(
            ErrorCode.AGENT_NOT_ALLOWED_AT_HUMAN_TABLE,
            f"agents are not allowed at a {kind.value} table",
        )


def verify_advisor(
    kind: TableKind | str,
    advisor_agent_id: str | None,
    *,
    advisor_owner_user_id: str | None = None,
    advisor_skills: frozenset[str] = frozenset(),
    registrant_user_id: str = "",
    advisors_in_use: frozenset[str] = frozenset(),
    venue: str = "tournament",
) -> None:
    """CoPilot registrations name an advisor the registrant owns, skilled for poker:sng, unshared
    (a tournament's registration, and a copilot cash room's join: ``venue="room"``).

    >>> verify_advisor("open", None)
    >>> verify_advisor("open", "agent-1")
    Traceback (most recent call last):
    ...
    domain.errors.DomainError: advisorAgentId is only accepted on a copilot tournament
    """
    kind = TableKind(kind)
    if kind is not TableKind.COPILOT:
        if advisor_agent_id is not None:
            raise DomainError(
                ErrorCode.ADVISOR_ON_NON_COPILOT_KIND,
                f"advisorAgentId is only accepted on a copilot {venue}",
                field="advisorAgentId",
            )
        return
    if not advisor_agent_id:
        raise DomainError(
            ErrorCode.ADVISOR_REQUIRED,
            f"a copilot {venue} needs an advisorAgentId",
            field="advisorAgentId",
        )
    if advisor_owner_user_id != registrant_user_id:
        raise DomainError(
            ErrorCode.ADVISOR_REQUIRED,
            "the advisor agent must be owned by the registrant",
            field="advisorAgentId",
        )
    if "poker:sng" not in advisor_skills:
        raise DomainError(
            ErrorCode.ADVISOR_REQUIRED,
            "the advisor agent lacks the poker:sng skill",
            field="advisorAgentId",
        )
    if advisor_agent_id in advisors_in_use:
        raise DomainError(
            ErrorCode.ADVISOR_REQUIRED,
            "the advisor agent already advises another player at this table",
            field="advisorAgentId",
        )


def verify_capacity(seats: int, taken: int) -> None:
    """A seat is free while reserved plus paid entries are fewer than the seats."""
    if taken >= seats:
        raise DomainError(ErrorCode.TOURNAMENT_FULL, f"all {seats} seats are taken")
