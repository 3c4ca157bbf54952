"""Async engine and session factory over asyncpg, shared by activities and the API."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlmodel.ext.asyncio.session import AsyncSession


def make_engine(database_url: str, *, pool_size: int = 5) -> AsyncEngine:
    return create_async_engine(database_url, pool_size=pool_size, pool_pre_ping=True)


class Database:
    """An engine plus a session factory; one per process."""

    def __init__(self, database_url: str, *, pool_size: int = 5) -> None:
        self.engine = make_engine(database_url, pool_size=pool_size)
        self._sessions = async_sessionmaker(
            self.engine, class_=AsyncSession, expire_on_commit=False
        )

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        async with self._sessions() as session:
            yield session

    async def dispose(self) -> None:
        await self.engine.dispose()
