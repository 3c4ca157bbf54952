"""Card commitments, the players' entropy and openings (domain/fairness.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from domain.errors import DomainError
from domain.fairness import (
    DECK_SIZE,
    audit_path,
    check_player_seed,
    commit,
    dealing_order,
    dealt_deck,
    merkle_root,
    mix,
    opening,
    opens,
    root_from_path,
)


def _leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


# RFC 6962's own test vector (certificate-transparency's merkle tree tests): eight leaves.
CT_LEAVES = [
    b"",
    b"\x00",
    b"\x10",
    b"\x20\x21",
    b"\x30\x31",
    b"\x40\x41\x42\x43",
    bytes(range(0x50, 0x58)),
    bytes(range(0x60, 0x70)),
]
CT_ROOTS = {
    1: "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    2: "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    3: "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    8: "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
}


def test_the_tree_is_rfc_6962s() -> None:
    leaves = [_leaf(d) for d in CT_LEAVES]
    for n, root in CT_ROOTS.items():
        assert merkle_root(leaves[:n]).hex() == root
    for n in range(1, 9):
        for m in range(n):
            path = audit_path(leaves[:n], m)
            assert root_from_path(leaves[m], m, n, path) == merkle_root(leaves[:n])
            if path:  # any sibling changed, or the wrong index: another root
                bad = [bytes(32), *path[1:]]
                assert root_from_path(leaves[m], m, n, bad) != merkle_root(leaves[:n])
                other = (m + 1) % n
                assert root_from_path(leaves[m], other, n, path) != merkle_root(leaves[:n])


def test_every_dealt_card_opens_and_nothing_else_does() -> None:
    deck = commit(bytes(range(32)))
    cards, order = dealt_deck(deck, {0: b"\x07" * 32, 2: b"two"})
    assert sorted(order) == list(range(DECK_SIZE)) and len(set(cards)) == DECK_SIZE
    for index in range(DECK_SIZE):
        item = opening(deck, order, index).to_dict()
        assert item["card"] == cards[index]
        assert opens(deck.root_hex, item)
        for key, forged in (
            ("card", "2c" if item["card"] != "2c" else "3c"),
            ("salt", "00" * 32),
            ("position", (order[index] + 1) % DECK_SIZE),
            ("proof", [*item["proof"][:-1], "00" * 32]),  # type: ignore[index]
        ):
            assert not opens(deck.root_hex, {**item, key: forged}), (index, key)
    assert not opens(commit(bytes(32)).root_hex, opening(deck, order, 0).to_dict())


def test_the_players_seeds_decide_the_order_and_the_root_binds_them() -> None:
    deck = commit(bytes(32))
    base = dealing_order(mix(deck.root, {0: b"a", 1: b"b"}))
    assert dealing_order(mix(deck.root, {1: b"b", 0: b"a"})) == base  # by seat, not arrival
    assert dealing_order(mix(deck.root, {0: b"a", 1: b"c"})) != base  # one seed changes all
    assert dealing_order(mix(deck.root, {0: b"a", 2: b"b"})) != base  # the seat counts
    assert dealing_order(mix(commit(bytes([1]) * 32).root, {0: b"a", 1: b"b"})) != base
    # The same seeds against another deck give another mix: a seed answers one root.
    assert mix(deck.root, {0: b"a"}) != mix(commit(bytes([2]) * 32).root, {0: b"a"})


def test_a_players_seed_is_hex_of_one_to_64_bytes() -> None:
    assert check_player_seed("00ff") == b"\x00\xff"
    for bad in ("", "zz", "0", "00" * 65):
        with pytest.raises(DomainError) as err:
            check_player_seed(bad)
        assert err.value.field == "seed"


def test_the_documented_reference_code_and_test_vector_hold() -> None:
    """docs/fairness.md's standard-library code gives the module's results and the vector."""
    doc = (Path(__file__).parents[2] / "docs" / "fairness.md").read_text()
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    ref: dict[str, Any] = {}
    exec(compile(code, "docs/fairness.md", "exec"), ref)
    secret = bytes(32)
    seeds = {0: bytes.fromhex("a1" * 32), 3: b"bob"}
    root, _, _ = ref["root_of"](secret)
    order = ref["dealing_order"](root, seeds)
    deck = commit(secret)
    assert root == deck.root and order == dealing_order(mix(deck.root, seeds))
    vector = doc.split("## Test vector", 1)[1]
    assert root.hex() in vector and mix(root, seeds).hex() in vector
    assert " ".join(map(str, order[:8])) in vector
    cards, _ = dealt_deck(deck, seeds)
    assert " ".join(cards[:8]) in vector
    first = opening(deck, order, 0)
    assert (
        first.salt in vector and first.proof[0] in vector and f"position {first.position}" in vector
    )
    proof = [bytes.fromhex(p) for p in first.proof]
    assert ref["opens"](root, first.position, first.card, bytes.fromhex(first.salt), proof)
    assert not ref["opens"](root, first.position, "2c", bytes.fromhex(first.salt), proof)
