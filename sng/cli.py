"""The ``sng`` command: run the stack or one part of it, mint dev tokens, preview structures."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated

import typer

from bench.runner import bench
from core.settings import Settings, get_settings, refuse_implicit_dev
from sng.cli_hand import hand_app
from sng.cli_structure import structure_app

if TYPE_CHECKING:
    import uvicorn

app = typer.Typer(
    help="Durable Sit-and-Go tournaments: operator and developer commands.", no_args_is_help=True
)
app.add_typer(structure_app, name="structure", help="Preview blind and payout structures.")
app.add_typer(hand_app, name="hand", help="Replay PHH hands and verify a hand's deck.")
app.command()(bench)


@app.command()
def dev(
    chain: str = typer.Option(
        "none",
        help="'anvil': also run a local chain (contracts deployed, demo wallets funded) "
        "and move money on-chain",
    ),
    timings: bool = typer.Option(
        False, "--timings", help="print when each part became ready (seconds since launch)"
    ),
) -> None:
    """Start PostgreSQL, Temporal, the worker and the API together; Ctrl-C stops them all."""
    from devtools.devstack import run_dev

    if chain not in ("none", "anvil"):
        raise typer.BadParameter("--chain is 'none' or 'anvil'")
    raise typer.Exit(run_dev(get_settings(), chain=chain, timings=timings))


GATED = typer.Option(
    False,
    "--gated",
    hidden=True,
    help="import, then wait for a 'go' line on stdin before connecting (sng dev starts the"
    " process while the services it needs come up)",
)


def _wait_for_go() -> None:
    """``--gated``: the heavy imports are done; go on once ``sng dev`` says the services are
    up (end of input without it: the stack is stopping, so exit)."""
    import sys

    if sys.stdin.readline().strip() != "go":
        raise typer.Exit(1)


@app.command()
def worker(gated: bool = GATED) -> None:
    """Run a worker against the configured Temporal and PostgreSQL (production shape)."""
    import worker as worker_module

    if gated:
        _wait_for_go()
    worker_module.main()  # the same as `python worker.py`


@app.command()
def schedules() -> None:
    """Create or update the payout reconciler's Temporal Schedule (every worker also does it
    at startup) and show it: paused or not, the next run, the last ones."""
    import asyncio

    import worker as worker_module
    from core.temporal import connect

    settings = get_settings()

    async def ensure() -> list[str]:
        client = await connect(settings)
        handle = await worker_module.ensure_reconciler_schedule(
            client, settings.temporal_task_queue
        )
        described = await handle.describe()
        state = described.schedule.state
        lines = [
            f"{described.id}: a ReconcilerWorkflow every "
            f"{worker_module.RECONCILER_EVERY.total_seconds():.0f}s on "
            f"{settings.temporal_task_queue}, {'PAUSED' if state.paused else 'running'}"
            + (f" ({state.note})" if state.note else "")
        ]
        lines += [f"  next run    {at.isoformat()}" for at in described.info.next_action_times[:1]]
        for done in described.info.recent_actions[-3:]:
            run = done.action
            ran = getattr(run, "workflow_id", "")
            lines.append(f"  ran         {done.started_at.isoformat()}  {ran}")
        return lines

    for line in asyncio.run(ensure()):
        typer.echo(line)
    # Done: leave without the interpreter's finalisation, during which the Temporal client's
    # core threads may still call into Python and abort the process after its work is done
    # (CI saw "PyGILState_Release ... finalizing", exit -6, once).
    import os
    import sys

    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


@app.command()
def api(
    proxy_headers: Annotated[
        bool | None,
        typer.Option(
            "--proxy-headers/--no-proxy-headers",
            help="read the client address from X-Forwarded-For (only from"
            " --forwarded-allow-ips); default SNG_PROXY_HEADERS, on",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            help="the proxies trusted with X-Forwarded-For (comma-separated addresses or"
            " networks, '*' for any); default SNG_FORWARDED_ALLOW_IPS, else"
            " FORWARDED_ALLOW_IPS, else 127.0.0.1 and ::1",
        ),
    ] = None,
    gated: bool = GATED,
) -> None:
    """Serve the HTTP API with uvicorn against the configured services."""
    import uvicorn

    settings = get_settings()
    refuse_implicit_dev(settings, "sng api")
    given = {"proxy_headers": proxy_headers, "forwarded_allow_ips": forwarded_allow_ips}
    settings = settings.model_copy(update={k: v for k, v in given.items() if v is not None})
    config = api_config(settings)  # builds the app: no connection until it serves
    if gated:
        _wait_for_go()
    uvicorn.Server(config).run()


def api_config(settings: Settings) -> uvicorn.Config:
    """How ``sng api`` serves the API: the settings' address and keep-alive, and whose proxy
    headers it believes (security review N10). Behind a reverse proxy the rate limits and the
    stream caps count ``X-Forwarded-For``'s client, but only on a connection from a trusted
    proxy (``forwarded_allow_ips``); anyone else's proxy headers are ignored, and its own
    address counts."""
    import uvicorn

    from api.app import create_app, server_options

    return uvicorn.Config(
        create_app(settings),
        **server_options(settings),
        host=settings.api_host,
        port=settings.api_port,
        log_level="info",
        timeout_keep_alive=settings.api_keepalive_seconds,
        proxy_headers=settings.proxy_headers,
        # None: uvicorn's own default ($FORWARDED_ALLOW_IPS, else 127.0.0.1 and ::1).
        forwarded_allow_ips=settings.forwarded_allow_ips or None,
    )


@app.command()
def migrate() -> None:
    """Apply the database migrations to DATABASE_URL."""
    from db.migrate import upgrade

    logging.basicConfig(level=logging.INFO)
    upgrade(get_settings().database_url)
    typer.echo("migrations applied")


@app.command()
def demo(
    seats: int = typer.Option(
        6, min=2, max=10, help="how many seats (bots take those people do not)"
    ),
    json_out: bool = typer.Option(False, "--json", help="print the result as JSON"),
    api_url: str = typer.Option("", "--api", help="the API's URL (default: from settings)"),
    level_seconds: int = typer.Option(30, min=30, help="seconds per blind level"),
    humans: int = typer.Option(
        0, min=0, max=9, help="seats left for people, who join at /play (the rest are bots)"
    ),
    copilot: Annotated[
        list[str] | None,
        typer.Option(
            "--copilot",
            help="a CoPilot tournament: the user id of each person who will play (repeat per"
            " --humans seat); each gets an advisor agent that the bundled advisor runs",
        ),
    ] = None,
    entrants: int | None = typer.Option(
        None,
        min=2,
        max=10_000,
        help="a multi-table tournament of this many bots on tables of --seats (above --seats)",
    ),
    late_seconds: int = typer.Option(
        0,
        "--late-seconds",
        min=0,
        help="MTT late registration: a fifth of the bots enter after the start, within it",
    ),
    re_entries: int = typer.Option(
        0, "--re-entries", min=0, help="MTT: times a bot busted during late registration re-enters"
    ),
    stack: int = typer.Option(
        1500,
        "--stack",
        min=100,
        max=1_000_000,
        help="the starting stack; the first small blind is a hundredth of it (a short stack"
        " busts bots sooner, e.g. inside a late-registration window)",
    ),
) -> None:
    """Play a whole tournament of built-in bots on the running stack and print the standings.

    With --humans N, N of the seats wait for people at /play (the command prints the page).
    With --entrants N above --seats, N bots play a multi-table tournament (docs/mtt.md)."""
    import asyncio
    import json

    from rich.console import Console
    from rich.table import Table

    from sdk.demo import run_demo

    if copilot is not None and len(copilot) != humans:
        raise typer.BadParameter(
            "name one person per human seat (--humans 1 --copilot alice)", param_hint="--copilot"
        )
    if humans >= seats:
        raise typer.BadParameter(
            "--humans must leave at least one seat to a bot", param_hint="--humans"
        )
    mtt = entrants is not None and entrants > seats
    if entrants is not None and not mtt:
        raise typer.BadParameter(
            "more entrants than --seats make a multi-table tournament", param_hint="--entrants"
        )
    if (late_seconds or re_entries) and not mtt:
        raise typer.BadParameter("needs --entrants above --seats", param_hint="--late-seconds")
    if re_entries and not late_seconds:
        raise typer.BadParameter("needs --late-seconds", param_hint="--re-entries")
    if mtt and (humans or copilot):
        raise typer.BadParameter("a multi-table demo is bots only", param_hint="--humans")
    settings = get_settings()
    url = api_url or f"http://{settings.api_host}:{settings.api_port}"
    console = Console(stderr=True)
    result = asyncio.run(
        run_demo(
            url,
            settings,
            seats=seats,
            level_seconds=level_seconds,
            humans=humans,
            copilot=copilot,
            console=None if json_out else console,
            entrants=entrants,
            late_seconds=late_seconds,
            re_entries=re_entries,
            stack=stack,
        )
    )
    if json_out:
        typer.echo(json.dumps(result))
        return
    table = Table(title=f"tournament {result['tournament_id']}: {result['state']}")
    for column in ("position", "player", "prize"):
        table.add_column(column)
    # By place, not by player: with re-entries a player finishes once per entry.
    prizes = {p["position"]: p["amount"] for p in result["payouts"]}
    for row in result["standings"]:
        prize = prizes.get(row["elimination_order"], "")
        table.add_row(str(row["position"]), row["player"], str(prize))
    Console().print(table)
    typer.echo(f"entry fees {result['entry_fees_total']}, rake {result['rake_total']}")


@app.command()
def advisor(
    key: str = typer.Option(..., "--key", help="the advisor agent's key (sk_...)"),
    tournament: str = typer.Option("", "--tournament", help="a copilot tournament's id"),
    room: str = typer.Option("", "--room", help="or a copilot cash room's id"),
    api_url: str = typer.Option("", "--api", help="the API's URL (default: from settings)"),
) -> None:
    """Run the bundled CoPilot advisor for the players who named this agent their advisor
    (docs/copilot.md): advice on each of their turns until the tournament ends or the room
    closes."""
    import asyncio

    from sdk.advisor import run_advisor

    if bool(tournament) == bool(room):
        raise typer.BadParameter("name one --tournament or one --room")
    settings = get_settings()
    url = api_url or f"http://{settings.api_host}:{settings.api_port}"
    asyncio.run(run_advisor(url, key, tournament or None, room_id=room or None))


@app.command()
def token(
    user_id: str = typer.Argument(..., help="the player's user id (the token's sub)"),
    ttl: int = typer.Option(86_400, help="seconds until it expires"),
) -> None:
    """Mint a player bearer token signed with the configured secret (dev and tests)."""
    from core.tokens import mint_player_token

    typer.echo(mint_player_token(get_settings(), user_id, ttl_seconds=ttl))


@app.command("agent-key")
def agent_key(
    owner_user_id: str = typer.Argument(..., help="the user who owns the agent"),
    name: str = typer.Option("agent", help="a name operators recognise"),
    skill: Annotated[
        list[str] | None, typer.Option(help="a skill, repeatable (poker:sng if none)")
    ] = None,
) -> None:
    """Create an agent in DATABASE_URL and print its id and API key (shown only this once)."""
    import asyncio

    from db.agents import create_agent
    from db.engine import Database

    async def create() -> tuple[str, str]:
        db = Database(get_settings().database_url)
        try:
            new = await create_agent(
                db, owner_user_id=owner_user_id, name=name, skills=skill or ["poker:sng"]
            )
            return new.agent.agent_id, new.key
        finally:
            await db.dispose()

    agent_id, key = asyncio.run(create())
    typer.echo(f"agent_id={agent_id}")
    typer.echo(f"key={key}")


if __name__ == "__main__":
    app()
