"""TournamentWorkflow: one tournament from registration onwards (id ``tournament-<id>``).

All state lives in one model so it can be carried across continue-as-new; every rule comes
from ``domain/`` and every side effect is an activity. Registration calls are Updates whose
validators refuse bad calls before anything reaches history.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy

with workflow.unsafe.imports_passed_through():
    from activities.persistence import PersistenceActivities
    from domain import registration
    from domain.errors import DomainError, ErrorCode
    from domain.settings import TournamentSettings, validate_settings
    from workflows import search_attributes as sa
    from workflows.errors import refusal
    from workflows.messages import (
        CreateTournamentInput,
        EntrantRow,
        EntrantStatus,
        EntrantView,
        RegisterInput,
        RegisterResult,
        TournamentPhase,
        TournamentRow,
        TournamentView,
    )

RESERVE_TTL = timedelta(seconds=120)
DB_TIMEOUT = timedelta(seconds=30)
# Persistence must eventually succeed (PostgreSQL may be down for a while): never give up.
DB_RETRY = RetryPolicy(maximum_interval=timedelta(seconds=30))


class TournamentState(BaseModel):
    tournament_id: str
    name: str
    phase: TournamentPhase = TournamentPhase.REGISTERING
    entrants: dict[str, EntrantView] = {}
    version: int = 0


@workflow.defn
class TournamentWorkflow:
    @workflow.init
    def __init__(self, inp: CreateTournamentInput) -> None:
        self.settings: TournamentSettings = validate_settings(inp.settings)
        self.raw_settings = inp.settings
        self.s = TournamentState(tournament_id=inp.tournament_id, name=inp.name)
        self.lock = asyncio.Lock()

    @workflow.run
    async def run(self, inp: CreateTournamentInput) -> TournamentView:
        await self._save_tournament()
        while self.s.phase is TournamentPhase.REGISTERING:
            expiry = self._next_reserve_expiry_ms()
            timeout = None
            if expiry is not None:
                timeout = timedelta(milliseconds=max(0, expiry - self._now_ms()))
            try:
                await workflow.wait_condition(
                    self._changed_since(self.s.version),
                    timeout=timeout,
                    timeout_summary="registration reserve expiry",
                )
            except TimeoutError:
                pass
            async with self.lock:
                await self._release_expired_reserves()
        await workflow.wait_condition(workflow.all_handlers_finished)
        return self._view()

    # -- registration ------------------------------------------------------------------
    @workflow.update
    async def register(self, req: RegisterInput) -> RegisterResult:
        async with self.lock:
            try:  # re-check under the lock: another register may have taken the last seat
                self._verify_register(req)
            except DomainError as err:
                raise refusal(err) from None
            until = self._now_ms() + int(RESERVE_TTL.total_seconds() * 1000)
            entrant = EntrantView(
                player_id=req.player_id,
                owner_user_id=req.owner_user_id,
                is_agent=req.is_agent,
                status=EntrantStatus.RESERVED,
                reserved_until_ms=until,
            )
            self.s.entrants[req.player_id] = entrant
            self._bump()
            await self._save_entrant(entrant, req.advisor_agent_id)
            await self._save_tournament()
            return RegisterResult(
                status=EntrantStatus.RESERVED,
                owner_user_id=req.owner_user_id,
                reserved_until_ms=until,
                version=self.s.version,
            )

    @register.validator
    def _validate_register(self, req: RegisterInput) -> None:
        try:
            self._verify_register(req)
        except DomainError as err:
            raise refusal(err) from None

    def _verify_register(self, req: RegisterInput) -> None:
        if self.s.phase is not TournamentPhase.REGISTERING:
            raise DomainError(
                ErrorCode.TOURNAMENT_NOT_IN_REGISTRATION,
                f"tournament is {self.s.phase.value}, not registering",
            )
        current = self.s.entrants.get(req.player_id)
        if current is not None and current.status is not EntrantStatus.RELEASED:
            raise DomainError(
                ErrorCode.TOURNAMENT_ALREADY_REGISTERED, "already registered for this tournament"
            )
        registration.verify_seat_allowed(self.settings.kind, is_agent=req.is_agent)
        registration.verify_advisor(self.settings.kind, req.advisor_agent_id)
        registration.verify_capacity(self.settings.seats, self._taken())

    # -- queries -----------------------------------------------------------------------
    @workflow.query
    def state(self) -> TournamentView:
        return self._view()

    # -- internals ---------------------------------------------------------------------
    def _taken(self) -> int:
        return sum(1 for e in self.s.entrants.values() if e.status is not EntrantStatus.RELEASED)

    def _now_ms(self) -> int:
        return int(workflow.now().timestamp() * 1000)

    def _changed_since(self, version: int) -> Callable[[], bool]:
        return lambda: self.s.version != version or self.s.phase is not TournamentPhase.REGISTERING

    def _bump(self) -> None:
        self.s.version += 1

    def _next_reserve_expiry_ms(self) -> int | None:
        times = [
            e.reserved_until_ms
            for e in self.s.entrants.values()
            if e.status is EntrantStatus.RESERVED and e.reserved_until_ms is not None
        ]
        return min(times) if times else None

    async def _release_expired_reserves(self) -> None:
        now = self._now_ms()
        for entrant in list(self.s.entrants.values()):
            if (
                entrant.status is EntrantStatus.RESERVED
                and entrant.reserved_until_ms is not None
                and entrant.reserved_until_ms <= now
            ):
                entrant.status = EntrantStatus.RELEASED
                entrant.reserved_until_ms = None
                self._bump()
                await self._save_entrant(entrant, None)
                await self._save_tournament()

    def _view(self) -> TournamentView:
        return TournamentView(
            tournament_id=self.s.tournament_id,
            name=self.s.name,
            state=self.s.phase,
            kind=str(self.settings.kind),
            seats=self.settings.seats,
            entry_fee=self.settings.entry_fee,
            starting_stack=self.settings.starting_stack,
            registered_count=self._taken(),
            entrants=[
                e for e in self.s.entrants.values() if e.status is not EntrantStatus.RELEASED
            ],
            version=self.s.version,
        )

    async def _save_tournament(self) -> None:
        workflow.upsert_search_attributes(
            [
                sa.TOURNAMENT_STATE.value_set(self.s.phase.value),
                sa.TABLE_KIND.value_set(str(self.settings.kind)),
                sa.SEATS.value_set(self.settings.seats),
                sa.ENTRY_FEE.value_set(self.settings.entry_fee),
                sa.CURRENT_LEVEL.value_set(0),
            ]
        )
        await workflow.execute_activity_method(
            PersistenceActivities.save_tournament,
            TournamentRow(
                tournament_id=self.s.tournament_id,
                name=self.s.name,
                kind=str(self.settings.kind),
                seats=self.settings.seats,
                entry_fee=self.settings.entry_fee,
                rake_fee=self.settings.rake_fee,
                starting_stack=self.settings.starting_stack,
                settings=self.raw_settings,
                state=self.s.phase,
                workflow_id=workflow.info().workflow_id,
                registered_count=self._taken(),
            ),
            summary=f"persist tournament ({self.s.phase.value})",
            start_to_close_timeout=DB_TIMEOUT,
            retry_policy=DB_RETRY,
        )

    async def _save_entrant(self, entrant: EntrantView, advisor_agent_id: str | None) -> None:
        await workflow.execute_activity_method(
            PersistenceActivities.save_entrant,
            EntrantRow(
                tournament_id=self.s.tournament_id,
                player_id=entrant.player_id,
                owner_user_id=entrant.owner_user_id,
                is_agent=entrant.is_agent,
                advisor_agent_id=advisor_agent_id,
                status=entrant.status,
                seat=entrant.seat,
            ),
            summary=f"persist entrant {entrant.player_id} ({entrant.status.value})",
            start_to_close_timeout=DB_TIMEOUT,
            retry_policy=DB_RETRY,
        )
