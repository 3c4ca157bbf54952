"""``sng structure``: operators preview blind and payout structures before creating a tournament.

Every number comes from the same ``domain`` functions the workflows use, so the preview is
what the tournament will do. ``--json`` prints machine-readable output for scripts:
``{"levels": [{"level", "sb", "bb", "ante"}, ...]}`` and ``{"paid", "bps", "amounts"}``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from domain.blinds import blinds_at_level
from domain.errors import DomainError
from domain.payouts import payout_amounts, payouts_for_field_size
from domain.schedule import MAX_PREVIEW_LEVELS
from domain.settings import BlindStructure, PayoutStructure, validate_wire

structure_app = typer.Typer(
    help="Preview blind and payout structures before creating a tournament.",
    no_args_is_help=True,
)

# Refusals name the wire field; operators typed the flag, so say the flag.
_FLAG_OF_FIELD = {
    "startingSmallBlind": "--start",
    "increaseFactor": "--factor",
    "levelDurationSeconds": "--level-seconds",
    "anteStartLevel": "--ante-start-level",
    "startingAnte": "--ante",
    "anteIncreaseFactor": "--ante-factor",
    "paidPlacesPercent": "--paid-percent",
    "topHeaviness": "--top-heaviness",
    "minPaidPlaces": "--min-paid",
    "fieldSize": "--field",
}


def _refuse(error: DomainError) -> typer.Exit:
    flag = _FLAG_OF_FIELD.get(error.field or "", error.field or "input")
    detail = error.message.split(": ", 1)[-1]
    typer.echo(f"Error: invalid value for {flag}: {detail}", err=True)
    return typer.Exit(code=2)


def _print_json(payload: dict[str, Any]) -> None:
    typer.echo(json.dumps(payload))


@structure_app.command()
def blinds(
    start: Annotated[int, typer.Option(help="level 0's small blind, honored verbatim")],
    factor: Annotated[float, typer.Option(help="geometric growth per level (>= 1.01)")],
    levels: Annotated[
        int, typer.Option(min=1, max=MAX_PREVIEW_LEVELS, help="how many levels to show")
    ] = 10,
    ante_start_level: Annotated[
        int | None, typer.Option(help="the level antes begin (default: never)")
    ] = None,
    ante: Annotated[int, typer.Option(help="the ante at --ante-start-level, verbatim")] = 0,
    ante_factor: Annotated[float, typer.Option(help="ante growth per level (>= 1)")] = 1.0,
    level_seconds: Annotated[int, typer.Option(help="seconds per level (>= 30)")] = 600,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of a table")] = False,
) -> None:
    """Show the first levels of a parametric blind structure (it continues past them)."""
    if ante and ante_start_level is None:
        typer.echo(
            "Error: --ante needs --ante-start-level (antes never start without it)", err=True
        )
        raise typer.Exit(code=2)
    try:
        structure = validate_wire(
            BlindStructure,
            {
                "startingSmallBlind": start,
                "increaseFactor": factor,
                "levelDurationSeconds": level_seconds,
                "anteStartLevel": ante_start_level,
                "startingAnte": ante,
                "anteIncreaseFactor": ante_factor,
            },
        )
    except DomainError as error:
        raise _refuse(error) from None
    rows = [(n, blinds_at_level(structure, n)) for n in range(levels)]
    if as_json:
        _print_json(
            {"levels": [{"level": n, "sb": b.sb, "bb": b.bb, "ante": b.ante} for n, b in rows]}
        )
        return
    minutes = f"{level_seconds / 60:g} min"
    table = Table(title=f"Blinds, {minutes} levels (…and it continues)")
    for column in ("level", "small blind", "big blind", "ante"):
        table.add_column(column, justify="right")
    for n, b in rows:
        table.add_row(str(n), f"{b.sb:,}", f"{b.bb:,}", f"{b.ante:,}" if b.ante else "-")
    Console().print(table)


@structure_app.command()
def payouts(
    field: Annotated[int, typer.Option(min=1, help="the sealed field size (entrants)")],
    paid_percent: Annotated[float, typer.Option(help="% of the field paid")] = 30.0,
    top_heaviness: Annotated[float, typer.Option(help="steepness τ of w(p) = p^-τ")] = 0.85,
    min_paid: Annotated[int, typer.Option(help="floor on paid places")] = 1,
    pool: Annotated[
        int | None, typer.Option(min=0, help="prize pool in chips, to show amounts")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON instead of a table")] = False,
) -> None:
    """Show how a payout structure splits the pool for a field (amounts null without --pool)."""
    try:
        structure = validate_wire(
            PayoutStructure,
            {
                "paidPlacesPercent": paid_percent,
                "topHeaviness": top_heaviness,
                "minPaidPlaces": min_paid,
            },
        )
        bps = payouts_for_field_size(structure, field)
    except DomainError as error:
        raise _refuse(error) from None
    amounts = None if pool is None else payout_amounts(bps, pool)
    if as_json:
        _print_json({"paid": len(bps), "bps": bps, "amounts": amounts})
        return
    table = Table(title=f"Payouts: {len(bps)} of {field} paid")
    for column in ("place", "bps", "percent", *(["amount"] if amounts is not None else [])):
        table.add_column(column, justify="right")
    for place, share in enumerate(bps, start=1):
        cells = [str(place), str(share), f"{share / 100:.2f}%"]
        if amounts is not None:
            cells.append(f"{amounts[place - 1]:,}")
        table.add_row(*cells)
    Console().print(table)
