"""Shared clients as typed dependencies (created once per process in the lifespan)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from temporalio.client import Client

from db.engine import Database
from sng.settings import Settings


def _client(request: Request) -> Client:
    client: Client = request.app.state.temporal
    return client


def _db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


TemporalDep = Annotated[Client, Depends(_client)]
DbDep = Annotated[Database, Depends(_db)]
SettingsDep = Annotated[Settings, Depends(_settings)]


def tournament_workflow_id(tournament_id: str) -> str:
    return f"tournament-{tournament_id}"


NAME_PATTERN = r"^[^\x00-\x1f\x7f]+$"
"""Display names: no control characters (PostgreSQL text cannot even store NUL)."""
