"""Tournaments: starting one, the operators' Updates (cancel, force-end, retry payouts), the
players' registration Updates (register, pay, leave), and the public record and the admin
view.

The record is read from the read model (``read_states``, the view the tournament's workflow
writes with its rows, docs/read-model.md), not asked of the workflow, wherever that view is the
workflow's own: while registering, starting and playing every change is written before it is
answered, and a closed or cancelled tournament's last view never changes. Only between the
end of play and the close (``ended``, ``settling``) do payouts and the rake change without a
write, and there the workflow is asked (``sng_api_workflow_queries_total{workflow=
"tournament"}`` counts each question); so is a tournament that finished before the read model
existed (its row was never written)."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import Field, model_validator
from sqlmodel import col, select
from temporalio.client import Client, WorkflowHandle
from temporalio.common import SearchAttributePair, TypedSearchAttributes, WorkflowIDReusePolicy
from temporalio.workflow import UpdateMethodMultiParam

from api.auth import Caller
from api.deps import NAME_PATTERN
from api.errors import QUERY_TIMEOUT, ApiError
from api.game_state import WatchedTournament, schedule_of
from api.read_model import WORKFLOW_QUERIES
from api.state import AppState
from api.updates import execute_update
from core.settings import Settings
from db import agents, readstore, wallets
from db.engine import Database
from db.models import PayoutIntent, Tournament
from domain.clock import level_started_at_ms
from domain.errors import ErrorCode
from domain.settings import validate_settings
from wire.game_state import TournamentSchedule
from wire.ids import tournament_workflow_id
from wire.messages import (
    CancelInput,
    CreateTournamentInput,
    EntrantStatus,
    ForceEndInput,
    LeaveResult,
    LeaveVia,
    PayEntryInput,
    PayoutStatus,
    Permit,
    RegisterInput,
    RegisterResult,
    RetryPayoutsInput,
    TournamentPhase,
    TournamentView,
    UnregisterInput,
    WireModel,
)
from workflows import search_attributes as sa
from workflows.tournament import TournamentWorkflow

P = TypeVar("P")
R = TypeVar("R")

FINAL = (TournamentPhase.CLOSED, TournamentPhase.CANCELLED)
"""A tournament in these states has published its last view, and its workflow has closed."""
STORED_IS_CURRENT = frozenset(
    {
        TournamentPhase.REGISTERING,
        TournamentPhase.STARTING,
        TournamentPhase.PLAYING,
        *FINAL,
    }
)
"""In these states the read model's view of a tournament is the workflow's own: each change
is written (``save_tournament``, ``record_hand``) before it is answered. In ``ended`` and
``settling`` payouts and the rake change without a write until the close."""


# -- starting ----------------------------------------------------------------------------------
class CreateTournamentBody(WireModel):
    name: str = Field(min_length=1, max_length=200, pattern=NAME_PATTERN)
    settings: dict[str, Any]
    hand_pause_ms: int = Field(default=2000, ge=0, le=60_000)
    """Pause between hands at the table (bot tables can run with 0)."""


class CreatedTournament(WireModel):
    tournament_id: str
    workflow_id: str
    state: str


ROW_WAIT = 10.0
"""How long creating a tournament waits for its workflow's first write (its read-model row)."""


async def _until_listed(db: Database, tournament_id: str) -> None:
    """Wait until the new tournament's row is in the read model (its workflow writes it
    before anything else, a fraction of a second), so that every public read answers for it
    as soon as its creation has been answered: the lobby, its events (which ask the read
    model only, security review N9) and its game state. A worker that is not running yet
    leaves the row for later: after ``ROW_WAIT`` the answer goes out anyway."""
    deadline = time.monotonic() + ROW_WAIT
    while time.monotonic() < deadline:
        async with db.session() as session:
            if await session.get(Tournament, tournament_id) is not None:
                return
        await asyncio.sleep(0.05)


async def start(state: AppState, body: CreateTournamentBody) -> CreatedTournament:
    """Start a tournament (``POST /admin/tournaments`` and the admin pages' create form), and
    answer once its row is listed."""
    created = await start_workflow(
        state.temporal,
        state.settings,
        name=body.name,
        raw=body.settings,
        hand_pause_ms=body.hand_pause_ms,
    )
    await _until_listed(state.db, created.tournament_id)
    return created


async def start_workflow(
    temporal: Client,
    settings: Settings,
    *,
    name: str,
    raw: dict[str, Any],
    hand_pause_ms: int,
    tournament_id: str | None = None,
) -> CreatedTournament:
    """Start a tournament's workflow.

    The id is 128 random bits and its workflow id can never be reused, even after the
    workflow closed (security review L11): the id is the prefix of every money key of the
    tournament, so a repeated id would make a new entry look paid or a payout look done."""
    # Refuse bad settings here with the field named, before any workflow exists.
    parsed = validate_settings(raw)
    tournament_id = tournament_id or secrets.token_hex(16)
    workflow_id = tournament_workflow_id(tournament_id)
    await temporal.start_workflow(
        TournamentWorkflow.run,
        CreateTournamentInput(
            tournament_id=tournament_id,
            name=name,
            settings=raw,
            hand_pause_ms=hand_pause_ms,
            money_backend=settings.money_backend,
            force_end_min_level_age_seconds=settings.force_end_min_level_age_seconds,
        ),
        id=workflow_id,
        task_queue=settings.temporal_task_queue,
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
        search_attributes=TypedSearchAttributes(
            [
                SearchAttributePair(sa.TOURNAMENT_STATE, "registering"),
                SearchAttributePair(sa.TABLE_KIND, str(parsed.kind)),
                SearchAttributePair(sa.SEATS, parsed.seats),
                SearchAttributePair(sa.ENTRY_FEE, parsed.entry_fee),
                SearchAttributePair(sa.CURRENT_LEVEL, 0),
            ]
        ),
        static_summary=f"{name}: {parsed.seats}-seat SnG, entry {parsed.entry_fee}",
    )
    return CreatedTournament(
        tournament_id=tournament_id, workflow_id=workflow_id, state="registering"
    )


# -- Updates -----------------------------------------------------------------------------------
def handle(
    temporal: Client, tournament_id: str
) -> WorkflowHandle[TournamentWorkflow, TournamentView]:
    return temporal.get_workflow_handle_for(
        TournamentWorkflow.run, tournament_workflow_id(tournament_id)
    )


async def cancel(state: AppState, tournament_id: str, reason: str) -> TournamentView:
    """Cancel while registering: every paid entry is refunded, then the state is cancelled."""
    return await execute_update(
        handle(state.temporal, tournament_id),
        TournamentWorkflow.cancel,
        CancelInput(reason=reason),
        closed_code=ErrorCode.INVALID_STATE,
    )


async def force_end(state: AppState, tournament_id: str, reason: str) -> TournamentView:
    """Stop a wedged tournament. The workflow refuses it while the level is younger than the
    deployment's minimum (fixed in the tournament at creation), whoever sends it: the API,
    the Temporal UI or CLI."""
    return await execute_update(
        handle(state.temporal, tournament_id),
        TournamentWorkflow.force_end,
        ForceEndInput(reason=reason),
        closed_code=ErrorCode.INVALID_STATE,
    )


async def retry_payouts(
    state: AppState, tournament_id: str, destinations: dict[str, str] | None = None
) -> TournamentView:
    """Try a settling tournament's refused payouts again now (each intent pays at most once),
    first naming the wallets of those whose winning entry's wallet is not known."""
    return await execute_update(
        handle(state.temporal, tournament_id),
        TournamentWorkflow.retry_payouts,
        RetryPayoutsInput(destinations=destinations or {}),
        closed_code=ErrorCode.INVALID_STATE,
    )


async def write(
    state: AppState,
    tournament_id: str,
    update: UpdateMethodMultiParam[[Any, P], R],
    arg: P,
    *,
    closed_code: ErrorCode,
) -> R:
    """A player's Update (register, pay, leave). A refused one changes nothing here (security
    review N4: dropping the shared record on every attempt made each read a fetch again); an
    accepted one refreshes this replica's shared record, so the writer's next read shows the
    write (the workflow wrote its view before it answered). On a tournament this replica
    already knows is over, Temporal is not asked at all."""
    views = state.tournament_views
    known: TournamentView | None = views.peek(tournament_id)
    if known is not None and known.state in FINAL:
        raise ApiError(closed_code, f"the tournament is {known.state.value}")
    result = await execute_update(
        handle(state.temporal, tournament_id), update, arg, closed_code=closed_code
    )
    views.refresh(tournament_id, _fetch_view(state, tournament_id))
    return result


async def register(
    state: AppState, tournament_id: str, caller: Caller, advisor_agent_id: str | None
) -> RegisterResult:
    """``register_for_tournament``: a reserve for the caller. The workflow checks the
    advisor's owner and skills; it learns them from the registry here. An unknown advisor is
    not a 404 here: the workflow refuses it with the seed's code
    (``advisor_on_non_copilot_kind`` on other kinds, ``advisor_required`` on copilot)."""
    advisor = None
    if advisor_agent_id is not None:
        advisor = await agents.by_id(state.db, advisor_agent_id)
    return await write(
        state,
        tournament_id,
        TournamentWorkflow.register,
        RegisterInput(
            player_id=caller.user_id,
            owner_user_id=caller.owner,
            is_agent=caller.is_agent,
            advisor_agent_id=advisor_agent_id,
            advisor_owner_user_id=advisor.owner_user_id if advisor else None,
            advisor_skills=list(advisor.skills) if advisor else [],
        ),
        closed_code=ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
    )


async def pay(
    state: AppState, tournament_id: str, caller: Caller, amount: int, permit: Permit | None
) -> RegisterResult:
    """The caller's entry fee (with an on-chain deployment's permit)."""
    if permit is not None and not await wallets.is_bound_to(state.db, permit.owner, caller.owner):
        # Never relay a permit for a wallet the caller has not proven is theirs (security
        # review C1): the vault would spend any standing allowance of the named owner.
        raise ApiError(
            ErrorCode.WALLET_NOT_BOUND,
            f"{permit.owner} is not bound to you: bind it first (POST /me/wallets)",
            field="permit.owner",
        )
    return await write(
        state,
        tournament_id,
        TournamentWorkflow.pay_entry,
        PayEntryInput(player_id=caller.user_id, amount=amount, permit=permit),
        closed_code=ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
    )


async def leave(state: AppState, tournament_id: str, player_id: str, via: LeaveVia) -> LeaveResult:
    """Leave (or stand up) during registration: an unpaid reserve is dropped, a paid entry
    refunded; a stand-up once play has begun is ``stand_up_not_allowed_in_tournament``."""
    if via is LeaveVia.STAND_UP:
        request = UnregisterInput(player_id=player_id, via=via)
        closed_code = ErrorCode.STAND_UP_NOT_ALLOWED_IN_TOURNAMENT
    else:  # the input as it always was sent (``via`` left to its default)
        request = UnregisterInput(player_id=player_id)
        closed_code = ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION
    return await write(
        state, tournament_id, TournamentWorkflow.unregister, request, closed_code=closed_code
    )


# -- reading -----------------------------------------------------------------------------------
async def stored_view(db: Database, tournament_id: str) -> TournamentView | None:
    """The tournament's view as the read model holds it (None: never written)."""
    return await readstore.read_tournament(db, tournament_id)


async def current_view(state: AppState, tournament_id: str) -> TournamentView:
    """The tournament's view: the read model's where it is the workflow's own
    (``STORED_IS_CURRENT``), else the workflow's answer to a query. A query on a closed
    workflow would be a full replay on a worker that runs live tables (security review N4);
    a stored view costs one indexed read and works while no worker answers."""
    stored = await stored_view(state.db, tournament_id)
    if stored is not None and stored.state in STORED_IS_CURRENT:
        return stored
    WORKFLOW_QUERIES.labels(workflow="tournament").inc()
    return await handle(state.temporal, tournament_id).query(
        TournamentWorkflow.state, rpc_timeout=QUERY_TIMEOUT
    )


def _fetch_view(state: AppState, tournament_id: str) -> Callable[[], Awaitable[TournamentView]]:
    async def fetch() -> TournamentView:
        return await current_view(state, tournament_id)

    return fetch


class PublicEntrant(WireModel):
    """An entrant as anyone may see it: no account, wallet or advisor (security review C1, L3:
    a listed wallet was the key to a free on-chain seat, and linked accounts to wallets)."""

    player_id: str
    is_agent: bool
    status: EntrantStatus
    seat: int | None = None
    reserved_until_ms: int | None = None
    entry_no: int = 1


class PublicPayout(WireModel):
    """A payout as anyone may see it: not its destination wallet, and not the text of a
    refusal (it can name the wallet or a node's error; security review 3, S9): a refused
    payout shows a code, and operators read the reason (``GET /admin/tournaments/{id}``)."""

    intent_id: str
    position: int
    player_id: str
    amount: int
    status: PayoutStatus
    tx_hash: str | None = None
    failure_code: str | None = None
    """``payout_wallet_unknown`` (the winning entry's wallet is not known: an operator names
    it) or ``payout_refused`` (any other refusal); null unless the payout was refused."""

    @model_validator(mode="before")
    @classmethod
    def _code_only(cls, data: Any) -> Any:
        if isinstance(data, dict) and "failure_reason" in data:
            data = dict(data)
            reason = data.pop("failure_reason")
            if reason:
                data["failure_code"] = (
                    "payout_wallet_unknown"
                    if str(reason).startswith("payout_wallet_unknown")
                    else "payout_refused"
                )
        return data


class TournamentDetail(TournamentView):
    entrants: list[PublicEntrant]  # type: ignore[assignment]
    payouts: list[PublicPayout] = Field(default_factory=list)  # type: ignore[assignment]
    tournament_schedule: TournamentSchedule
    """The resolved blind preview from the current level (open-ended: ``continues``) and the
    resolved prize structure as ``{position, share}`` for the sealed field (or the seats)."""

    @model_validator(mode="before")
    @classmethod
    def _rake_code_only(cls, data: Any) -> Any:
        """A refused rake shows as ``rake_refused``: its text is for operators (S9)."""
        if isinstance(data, dict) and data.get("rake_failure"):
            data = {**data, "rake_failure": "rake_refused"}
        return data


async def public_record(state: AppState, tournament_id: str) -> TournamentDetail:
    """``GET /tournaments/{id}``: served from a per-replica record shared by every caller, at
    most one second old (security review M4), read from the read model
    (``current_view``). A registration, payment or leave accepted through this replica
    refreshes it; a refused one changes nothing."""
    view = await state.tournament_views.get(tournament_id, _fetch_view(state, tournament_id))
    schedule = schedule_of(WatchedTournament.of(view))
    return TournamentDetail(**view.model_dump(), tournament_schedule=schedule)


def current_level_started_at_ms(view: TournamentView) -> int | None:
    """When the view's current level began, from the same level clock the workflow runs."""
    if view.play_start_ms is None:
        return None
    return level_started_at_ms(
        validate_settings(view.settings), view.play_start_ms, view.current_level
    )


async def payout_intents(db: Database, tournament_id: str) -> list[PayoutIntent]:
    """The tournament's payout intents as the money legs recorded them, by position."""
    async with db.session() as session:
        return list(
            await session.exec(
                select(PayoutIntent)
                .where(PayoutIntent.tournament_id == tournament_id)
                .order_by(col(PayoutIntent.position))
            )
        )
