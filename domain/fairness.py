"""A deck nobody can stack and only shown cards revealed: card commitments, the players'
entropy, openings (docs/fairness.md has the scheme, its threat model and a test vector).

1. **Committed deck.** From the hand's 32-byte secret the server shuffles the deck
   (``domain.deck.shuffled_deck``) into *positions* 0..51 and salts each position
   (``salt_i = HMAC-SHA256(secret, "sng-deck-v2 salt" || i)``). Each position's leaf is
   ``SHA-256(0x00 || i || card || salt_i)`` (``i`` one byte, the card two ASCII bytes); the
   **root** is the RFC 6962 Merkle tree hash over the 52 leaves, published before anything
   depends on the players.
2. **Players' entropy.** Each seated player may send a seed (1 to 64 bytes) for the hand,
   bound to the root it answers. ``mix = SHA-256("sng-deck-v2 mix" || root || n || for each
   seed by seat: seat || len || seed)``; the **dealing order** is the Fisher-Yates
   permutation ``pi`` of 0..51 drawn from ``mix`` by the deck's own stream: the card dealt
   ``j``-th (hole cards, burns and board in the order ``domain.holdem.cards`` documents)
   is the committed card at position ``pi[j]``.
3. **Openings.** A card is revealed with its position, salt and Merkle audit path, which
   anyone checks against the root. Only the board and the cards shown down are opened in
   public; each player gets the openings of their own hole cards.

Pure: standard library only, no randomness of its own.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from domain.deck import SEED_BYTES, fisher_yates, shuffled_deck, verify_seed
from domain.errors import DomainError, ErrorCode
from domain.holdem.cards import ALL_CARDS, board_indices, hole_card_index, is_card

VERSION = "v2"
SALT_LABEL = b"sng-deck-v2 salt"
MIX_LABEL = b"sng-deck-v2 mix"
MAX_PLAYER_SEED = 64
"""Bytes a player's seed may have (1 at least)."""
DECK_SIZE = len(ALL_CARDS)


def _h(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


# -- RFC 6962 Merkle tree -------------------------------------------------------------------
def _split(n: int) -> int:
    """The largest power of two below ``n`` (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def merkle_root(leaves: Sequence[bytes]) -> bytes:
    """RFC 6962 ``MTH`` over leaf hashes (already ``SHA-256(0x00 || data)``).

    >>> merkle_root([_h(b"\\x00a")]).hex() == _h(b"\\x00a").hex()
    True
    """
    if not leaves:
        return _h(b"")
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return _h(b"\x01" + merkle_root(leaves[:k]) + merkle_root(leaves[k:]))


def audit_path(leaves: Sequence[bytes], m: int) -> list[bytes]:
    """RFC 6962 ``PATH(m, D[n])``: the sibling hashes from leaf ``m`` up to the root."""
    if len(leaves) <= 1:
        return []
    k = _split(len(leaves))
    if m < k:
        return [*audit_path(leaves[:k], m), merkle_root(leaves[k:])]
    return [*audit_path(leaves[k:], m - k), merkle_root(leaves[:k])]


def root_from_path(leaf: bytes, m: int, n: int, path: Sequence[bytes]) -> bytes | None:
    """The root a leaf and its audit path give (RFC 9162 2.1.3.2), or None if the path does
    not fit a tree of ``n`` leaves."""
    if not 0 <= m < n:
        return None
    fn, sn, r = m, n - 1, leaf
    for p in path:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            r = _h(b"\x01" + p + r)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = _h(b"\x01" + r + p)
        fn >>= 1
        sn >>= 1
    return r if sn == 0 else None


# -- the committed deck ---------------------------------------------------------------------
def salt(secret: bytes, position: int) -> bytes:
    return hmac.new(secret, SALT_LABEL + bytes([position]), hashlib.sha256).digest()


def leaf_hash(position: int, card: str, salt_: bytes) -> bytes:
    """A position's leaf: ``SHA-256(0x00 || position || card || salt)``."""
    return _h(b"\x00" + bytes([position]) + card.encode("ascii") + salt_)


@dataclass(frozen=True, slots=True)
class CommittedDeck:
    """The server's deck for one hand: its cards by position, their salts and the root."""

    cards: tuple[str, ...]
    salts: tuple[bytes, ...]
    leaves: tuple[bytes, ...]
    root: bytes

    @property
    def root_hex(self) -> str:
        return self.root.hex()


def commit(secret: bytes) -> CommittedDeck:
    """>>> commit(bytes(32)).root_hex[:16]
    'fe5bb978efb1878f'
    """
    verify_seed(secret)
    cards = tuple(shuffled_deck(secret))
    salts = tuple(salt(secret, i) for i in range(DECK_SIZE))
    leaves = tuple(leaf_hash(i, c, s) for i, (c, s) in enumerate(zip(cards, salts, strict=True)))
    return CommittedDeck(cards=cards, salts=salts, leaves=leaves, root=merkle_root(leaves))


# -- the players' entropy -------------------------------------------------------------------
def check_player_seed(seed_hex: str) -> bytes:
    """A player's seed from its hex form, or a coded refusal."""
    try:
        seed = bytes.fromhex(seed_hex)
    except ValueError:
        raise DomainError(ErrorCode.VALIDATION_ERROR, "a seed is hex", field="seed") from None
    if not 1 <= len(seed) <= MAX_PLAYER_SEED:
        raise DomainError(
            ErrorCode.VALIDATION_ERROR,
            f"a seed is 1 to {MAX_PLAYER_SEED} bytes",
            field="seed",
        )
    return seed


def mix(root: bytes, seeds: Mapping[int, bytes]) -> bytes:
    """What fixes the dealing order: the root and every seed received, by seat."""
    out = MIX_LABEL + root + bytes([len(seeds)])
    for seat in sorted(seeds):
        seed = seeds[seat]
        out += bytes([seat, len(seed)]) + seed
    return _h(out)


def dealing_order(mixed: bytes) -> list[int]:
    """``pi``: the committed position of the card dealt ``j``-th."""
    if len(mixed) != SEED_BYTES:
        raise ValueError("a mix is 32 bytes")
    return fisher_yates(list(range(DECK_SIZE)), mixed)


def dealt_deck(deck: CommittedDeck, seeds: Mapping[int, bytes]) -> tuple[list[str], list[int]]:
    """The cards in the order the hand deals them, and ``pi``."""
    order = dealing_order(mix(deck.root, seeds))
    return [deck.cards[p] for p in order], order


# -- openings -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Opening:
    """One card revealed: dealt ``index``-th, from committed ``position``."""

    index: int
    position: int
    card: str
    salt: str
    proof: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "index": self.index,
            "position": self.position,
            "card": self.card,
            "salt": self.salt,
            "proof": list(self.proof),
        }


def opening(deck: CommittedDeck, order: Sequence[int], index: int) -> Opening:
    position = order[index]
    return Opening(
        index=index,
        position=position,
        card=deck.cards[position],
        salt=deck.salts[position].hex(),
        proof=tuple(p.hex() for p in audit_path(deck.leaves, position)),
    )


def opens(root_hex: str, item: Mapping[str, object]) -> bool:
    """True when a revealed card (``position``, ``card``, ``salt``, ``proof``) opens its
    commitment under ``root_hex``."""
    try:
        position = item["position"]
        card = item["card"]
        salt_ = bytes.fromhex(str(item["salt"]))
        proof = [bytes.fromhex(str(p)) for p in item["proof"]]  # type: ignore[attr-defined]
        root = bytes.fromhex(root_hex)
    except (KeyError, TypeError, ValueError):
        return False
    if not isinstance(position, int) or not isinstance(card, str) or not is_card(card):
        return False
    if not 0 <= position < DECK_SIZE or len(salt_) != 32:
        return False
    found = root_from_path(leaf_hash(position, card, salt_), position, DECK_SIZE, proof)
    return found is not None and hmac.compare_digest(found, root)


# -- a finished hand: what is revealed, to whom ---------------------------------------------
BOARD_STREETS = {0: (), 3: (1,), 4: (1, 2), 5: (1, 2, 3)}
"""The streets a board of this many cards dealt."""


def board_deal_indices(board_size: int, player_count: int) -> list[int]:
    """The dealing indices of a board's cards, in board order."""
    return [j for street in BOARD_STREETS[board_size] for j in board_indices(street, player_count)]


def hole_deal_indices(player: int, player_count: int) -> list[int]:
    """The dealing indices of a player's two hole cards (``player``: index from the button)."""
    return [hole_card_index(player, k, player_count) for k in (0, 1)]


def reveal(
    deck: CommittedDeck,
    order: Sequence[int],
    *,
    seats: Sequence[int],
    board_size: int,
    shown: Collection[int],
) -> tuple[list[dict[str, object]], dict[int, list[dict[str, object]]]]:
    """The public openings (the board dealt, the hands shown down) and each seat's own
    (its hole cards), for a hand dealt to ``seats`` in engine order."""
    n = len(seats)
    public = board_deal_indices(board_size, n)
    own: dict[int, list[dict[str, object]]] = {}
    for player, seat in enumerate(seats):
        mine = hole_deal_indices(player, n)
        own[seat] = [opening(deck, order, j).to_dict() for j in mine]
        if seat in shown:
            public += mine
    return [opening(deck, order, j).to_dict() for j in sorted(public)], own


def publish(
    record: dict[str, Any],
    deck: CommittedDeck,
    order: Sequence[int],
    *,
    seats: Sequence[int],
    seeds: Mapping[int, str],
    committed_ms: int,
    prev_hash: str | None,
    served: Callable[[dict[str, Any]], Mapping[str, Any]],
) -> dict[str, dict[str, object]]:
    """Turn a finished hand's engine record (``domain.holdem.hand_record``) into its public
    record, in place, and return each seat's private part.

    The public record keeps the hands shown down only, gains ``deck`` (the root, the seeds,
    the openings of the board and the shown cards), ``prev_hash`` (the table's chain head
    before it) and ``hash`` (``record_hash`` of ``served(record)``, the record as an observer
    is served it). Each seat's private part is its hole cards with their openings.
    """
    shown = {int(seat) for seat in record["shown"]}
    public, own = reveal(deck, order, seats=seats, board_size=len(record["board"]), shown=shown)
    hole = record["hole_cards"]
    record["hole_cards"] = {seat: cards for seat, cards in hole.items() if int(seat) in shown}
    record["deck"] = {
        "version": VERSION,
        "root": deck.root_hex,
        "seeds": {str(seat): seed for seat, seed in sorted(seeds.items())},
        "committed_at_ms": committed_ms,
        "revealed": public,
    }
    record["prev_hash"] = prev_hash
    record["hash"] = record_hash(served(record))
    return {str(seat): {"cards": hole[str(seat)], "openings": mine} for seat, mine in own.items()}


UNHASHED = ("hash", "settlement", "yourCards")
"""What a record's hash leaves out: itself, a room's settlement (it follows from the stacks,
which are hashed), and the reader's own cards."""


def record_hash(served: Mapping[str, Any]) -> str:
    """The hash that links a hand record into its table's chain: SHA-256 of the record as the
    API serves it to an observer (without ``UNHASHED``), as canonical JSON (keys sorted, no
    spaces, ASCII)."""
    body = {k: v for k, v in served.items() if k not in UNHASHED}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def verify_record(record: Mapping[str, Any], previous: str | None = None) -> list[str]:
    """Problems with a hand record as the API serves it (camelCase); empty when it checks.

    Checks that every revealed card opens its commitment under the published root, that its
    position is the one the players' seeds give its dealing index, that the board and the
    shown hands are exactly the revealed cards at their dealing indices, that nothing else is
    revealed, that the reader's own cards (``yourCards``) open too, and the record's hash and
    (with ``previous``, the hash of the record before it) its link.
    """
    deck = record.get("deck")
    if not isinstance(deck, Mapping) or deck.get("version") != VERSION:
        return ["the record has no card commitments (deck version v2)"]
    problems: list[str] = []
    try:
        root = str(deck["root"])
        seeds = {int(seat): bytes.fromhex(str(h)) for seat, h in dict(deck["seeds"]).items()}
        order = dealing_order(mix(bytes.fromhex(root), seeds))
        seats = [int(s) for s in record["seats"]]
        board = list(record["board"])
        shown = {int(seat): list(hand["cards"]) for seat, hand in dict(record["shown"]).items()}
    except (KeyError, TypeError, ValueError) as err:
        return [f"the record is malformed: {err!r}"]
    if record.get("deckCommitment") not in (None, root):
        problems.append("deckCommitment is not the deck's root")
    revealed: dict[int, str] = {}
    for item in deck.get("revealed", []):
        index = item.get("index") if isinstance(item, Mapping) else None
        if not isinstance(index, int) or not 0 <= index < DECK_SIZE:
            problems.append(f"a revealed card has no dealing index: {item!r}")
            continue
        if not opens(root, item):
            problems.append(f"the card dealt {index}th does not open its commitment")
        elif order[index] != item["position"]:
            problems.append(f"the card dealt {index}th is not from the position the seeds give")
        revealed[index] = str(item["card"])
    n = len(seats)
    expected: dict[int, str] = {}
    if len(board) not in BOARD_STREETS:
        problems.append(f"a board of {len(board)} cards")
    else:
        expected.update(zip(board_deal_indices(len(board), n), board, strict=True))
    for player, seat in enumerate(seats):
        if seat in shown:
            expected.update(zip(hole_deal_indices(player, n), shown[seat], strict=False))
    if set(shown) - set(seats):
        problems.append("a shown hand is not at a dealt seat")
    for index, card in sorted(expected.items()):
        if revealed.get(index) != card:
            problems.append(f"the card dealt {index}th ({card}) is not the one revealed")
    if set(revealed) - set(expected):
        problems.append("cards that were not shown are revealed")
    mine = record.get("yourCards")
    if isinstance(mine, Mapping):
        own = mine.get("seat")
        if not isinstance(own, int) or own not in seats:
            problems.append("yourCards names a seat that was not dealt")
        else:
            indices = hole_deal_indices(seats.index(own), n)
            items = list(mine.get("openings", []))
            cards = [str(i.get("card")) for i in items if isinstance(i, Mapping)]
            if [i.get("index") for i in items if isinstance(i, Mapping)] != indices:
                problems.append("yourCards are not your dealing indices")
            elif not all(opens(root, i) and order[i["index"]] == i["position"] for i in items):
                problems.append("yourCards do not open their commitments")
            elif cards != list(mine.get("cards", [])):
                problems.append("yourCards are not the cards their openings reveal")
    if record.get("hash") != record_hash(record):
        problems.append("the record's hash is not the hash of its content")
    if previous is not None and record.get("prevHash") != previous:
        problems.append("the record does not link to the one before it")
    return problems
