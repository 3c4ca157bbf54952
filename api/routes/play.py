"""Playing: the caller's game state (long-pollable, served from a shared cache) and actions.
The work is the play service's (api/services/play.py), shared with the rooms, the WebSocket and
the fast path."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from api.auth import CurrentPlayer
from api.deps import IdempotencyKey, TournamentId
from api.read_model import LongPollDep
from api.services import play
from api.services.play import ActBody, SeedBody, TableRef
from api.state import AppStateDep
from api.stream_auth import StreamCredential
from wire.game_state import GameState
from wire.table_messages import ActResult, SeedResult

router = APIRouter(prefix="/tournaments", tags=["play"])


@router.get(
    "/{tournament_id}/game-state", response_model=None, responses={200: {"model": GameState}}
)
async def get_game_state(
    tournament_id: TournamentId,
    request: Request,
    state: AppStateDep,
    caller: CurrentPlayer,
    poll: LongPollDep,
) -> dict[str, Any]:
    """The caller's view: the table (own hole cards only), legal actions with amounts, and the
    tournament fields. ``waitForChange=<version>`` long-polls until the version moves on (or
    ``timeout`` seconds pass)."""
    body = await play.tournament_game_state(
        state,
        tournament_id,
        caller.user_id,
        poll.wait_for_change,
        poll.wait_seconds,
        StreamCredential(request, caller.user_id),
    )
    return Response(body, media_type="application/json")  # type: ignore[return-value]


@router.post("/{tournament_id}/act", response_model=ActResult, response_model_by_alias=True)
async def act(
    tournament_id: TournamentId,
    body: ActBody,
    state: AppStateDep,
    caller: CurrentPlayer,
    idempotency_key: IdempotencyKey = None,
) -> ActResult:
    """Act on your turn. The answer's ``version`` is the game state's, ready for
    ``waitForChange``."""
    return await play.act(
        state, TableRef.tournament(tournament_id), caller.user_id, body, idempotency_key
    )


@router.post("/{tournament_id}/seed", response_model=SeedResult, response_model_by_alias=True)
async def seed(
    tournament_id: TournamentId, body: SeedBody, state: AppStateDep, caller: CurrentPlayer
) -> SeedResult:
    """Send a seed for the next hand before it is dealt: with the other seats' seeds it fixes
    which committed card goes where (docs/fairness.md). Refused with ``stale_commitment``
    once that hand is dealt, ``already_seeded`` for a second seed."""
    return await play.seed(state, TableRef.tournament(tournament_id), caller.user_id, body)


@router.post("/{tournament_id}/sit-in", response_model=ActResult, response_model_by_alias=True)
async def sit_in(
    tournament_id: TournamentId, state: AppStateDep, caller: CurrentPlayer
) -> ActResult:
    """Come back after sitting out (two timeouts in a row): you get your decisions again from
    your next turn. Refused with ``invalid_state`` when you are not sitting out."""
    return await play.sit_in(state, TableRef.tournament(tournament_id), caller.user_id)
