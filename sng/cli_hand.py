"""``sng hand``: replay a PHH hand through our engine and verify a hand's deck commitment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from domain import fairness
from domain.deck import commitment, shuffled_deck
from domain.errors import DomainError
from domain.holdem.cards import board_indices, hole_card_index
from domain.phh import PhhReplayError, parse_phh, replay_phh

hand_app = typer.Typer(help="Replay and verify hands.", no_args_is_help=True)


@hand_app.command()
def replay(
    file: Annotated[Path, typer.Argument(help="A PHH hand history (.phh).", exists=True)],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Replay a No-Limit Hold'em PHH hand and print its finishing stacks."""
    try:
        hand = replay_phh(parse_phh(file.read_text()))
    except PhhReplayError as exc:
        if as_json:
            typer.echo(json.dumps({"error": {"index": exc.index, "reason": exc.reason}}))
        else:
            typer.echo(
                f"illegal action at index {exc.index} ({exc.action!r}): {exc.reason}", err=True
            )
        raise typer.Exit(1) from None
    except DomainError as exc:
        typer.echo(f"{exc.code}: {exc.message}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps({"finishing_stacks": hand.stacks}))
    else:
        typer.echo(" ".join(str(stack) for stack in hand.stacks))


def _first(record: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in record:
            return record[name]
    return None


def verify_record(record: dict[str, Any]) -> list[str]:
    """Problems found in a hand record's deck evidence; empty when it checks out."""
    seed_hex = _first(record, "deckSeed", "deck_seed", "seed", "revealed_seed", "revealedSeed")
    committed = _first(record, "deckCommitment", "deck_commitment", "commitment")
    if not isinstance(seed_hex, str) or not isinstance(committed, str):
        return ["the record needs a revealed seed and a deck commitment"]
    try:
        seed = bytes.fromhex(seed_hex)
    except ValueError:
        return ["the seed is not hex"]
    if len(seed) != 32:
        return ["the seed is not 32 bytes"]
    problems = []
    if commitment(seed) != committed.lower():
        problems.append("SHA-256 of the seed does not match the commitment")
    deck = shuffled_deck(seed)
    if "deck" in record and list(record["deck"]) != deck:
        problems.append("the recorded deck is not the one the seed gives")
    seats = record.get("seats")
    # The API serves camelCase (``holeCards``); the engine's own record is snake_case.
    hole = _first(record, "holeCards", "hole_cards")
    if isinstance(seats, list) and isinstance(hole, dict):
        count = len(seats)
        for i, seat in enumerate(seats):
            expected = [deck[hole_card_index(i, k, count)] for k in (0, 1)]
            if list(hole.get(str(seat), expected)) != expected:
                problems.append(f"seat {seat}'s hole cards are not the ones the seed deals")
        board = [deck[k] for street in (1, 2, 3) for k in board_indices(street, count)]
        recorded = list(record.get("board", []))
        if recorded != board[: len(recorded)]:
            problems.append("the board is not the one the seed deals")
    return problems


def verify_chain(records: list[Any], previous: str | None = None) -> list[str]:
    """Problems with hand records as the API serves them, in order: each one checked, and
    each linked to the one before it (the first to ``previous`` when given)."""
    problems = []
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            problems.append(f"record {i}: not an object")
            continue
        label = f"hand {record.get('handNumber', i)}: "
        if "deck" not in record:  # dealt before card commitments: its seed was revealed
            problems += [label + p for p in verify_record(record)]
            continue
        problems += [label + p for p in fairness.verify_record(record, previous)]
        previous = record.get("hash")
    return problems


@hand_app.command()
def verify(
    file: Annotated[
        Path, typer.Argument(help="A JSON hand record, or a list of a table's records.")
    ],
    previous: Annotated[
        str | None, typer.Option(help="The hash the (first) record must link to.")
    ] = None,
) -> None:
    """Check hand records exactly as the API serves them (docs/fairness.md): every revealed
    card opens the deck's root, the dealing order follows from the players' seeds, the board
    and shown hands are those cards, nothing else is revealed, and the hash chain holds."""
    if not file.exists():
        typer.echo(f"no such file: {file}", err=True)
        raise typer.Exit(2)
    try:
        loaded = json.loads(file.read_text())
    except json.JSONDecodeError as exc:
        typer.echo(f"not JSON: {exc}", err=True)
        raise typer.Exit(2) from None
    records = loaded if isinstance(loaded, list) else [loaded]
    problems = verify_chain(records, previous)
    if problems:
        for problem in problems:
            typer.echo(f"FAIL: {problem}", err=True)
        raise typer.Exit(1)
    typer.echo(f"OK: {len(records)} record(s) check out against their commitments")
