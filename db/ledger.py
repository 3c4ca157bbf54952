"""The double-entry virtual-chip ledger: idempotent postings that never overdraw an account.

Every posting moves chips between accounts in one transaction; its legs sum to zero, so the
whole ledger always sums to zero. A posting is identified by its idempotency key: posting the
same key again (a retried activity) changes nothing and reports the first result. Only the
``mint`` account (the source of operator credits and the dev faucet) may go negative.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from db.engine import Database
from domain.errors import DomainError, ErrorCode

MINT = "mint"
HOUSE = "house"


def user_account(user_id: str) -> str:
    return f"user:{user_id}"


def escrow_account(tournament_id: str) -> str:
    return f"escrow:{tournament_id}"


def room_seat_account(room_id: str, player_id: str) -> str:
    """A player's stack at a cash room: the entry goes in on join, each hand's result moves
    between the seats' accounts, and what is left goes home on leave."""
    return f"room:{room_id}:{player_id}"


@dataclass(frozen=True)
class PostingResult:
    key: str
    applied: bool
    """False when the key had already been posted (a retry): nothing moved this time."""


async def _ensure_account(conn: AsyncConnection, account: str) -> None:
    kind = account.split(":", 1)[0]
    await conn.execute(
        text(
            "INSERT INTO ledger_accounts (id, kind, balance, allow_negative, created_at)"
            " VALUES (:id, :kind, 0, :neg, now()) ON CONFLICT (id) DO NOTHING"
        ),
        {"id": account, "kind": kind, "neg": account == MINT},
    )


async def transfer(
    db: Database, *, key: str, source: str, destination: str, amount: int, memo: str = ""
) -> PostingResult:
    """Move ``amount`` chips from ``source`` to ``destination`` exactly once per ``key``."""
    if amount <= 0:
        raise DomainError(ErrorCode.VALIDATION_ERROR, "a transfer moves a positive amount")
    if source == destination:
        raise DomainError(ErrorCode.VALIDATION_ERROR, "a transfer needs two different accounts")
    return await post(db, key=key, legs={source: -amount, destination: amount}, memo=memo)


async def post(db: Database, *, key: str, legs: dict[str, int], memo: str = "") -> PostingResult:
    """One posting of several legs (account → signed amount) that sum to zero, exactly once per
    ``key``; the debited accounts must cover their legs. Zero legs are left out."""
    entries = tuple(sorted((account, amount) for account, amount in legs.items() if amount))
    if len(entries) < 2 or sum(amount for _, amount in entries) != 0:
        raise DomainError(
            ErrorCode.VALIDATION_ERROR, "a posting needs two or more legs that sum to zero"
        )
    try:
        async with db.engine.begin() as conn:
            for account, _ in entries:
                await _ensure_account(conn, account)
            inserted = 0
            for account, delta in entries:
                # A concurrent posting of the same key waits on the unique index here, then
                # finds the row and does nothing.
                result = await conn.execute(
                    text(
                        "INSERT INTO ledger_entries (posting_key, account_id, amount, memo,"
                        " created_at) VALUES (:key, :acct, :amt, :memo, now())"
                        " ON CONFLICT (posting_key, account_id) DO NOTHING RETURNING id"
                    ),
                    {"key": key, "acct": account, "amt": delta, "memo": memo[:200]},
                )
                inserted += len(result.fetchall())
            if inserted == 0:
                await _verify_same_posting(conn, key, entries)
                return PostingResult(key, applied=False)
            if inserted != len(entries):
                raise DomainError(
                    ErrorCode.VALIDATION_ERROR, f"posting {key} was reused with other accounts"
                )
            # Lock order by account id (entries are sorted) so postings never deadlock.
            for account, delta in entries:
                await conn.execute(
                    text("UPDATE ledger_accounts SET balance = balance + :d WHERE id = :id"),
                    {"d": delta, "id": account},
                )
    except IntegrityError as err:
        if "ledger_balance_nonnegative" in str(err.orig):
            short = ", ".join(account for account, amount in entries if amount < 0)
            raise DomainError(
                ErrorCode.INSUFFICIENT_FUNDS, f"{short} cannot cover the posting {key}"
            ) from None
        raise
    return PostingResult(key, applied=True)


async def _verify_same_posting(
    conn: AsyncConnection, key: str, legs: tuple[tuple[str, int], ...]
) -> None:
    rows = await conn.execute(
        text("SELECT account_id, amount FROM ledger_entries WHERE posting_key = :k"), {"k": key}
    )
    if sorted((r.account_id, r.amount) for r in rows) != sorted(legs):
        raise DomainError(
            ErrorCode.VALIDATION_ERROR, f"posting {key} was already used for a different transfer"
        )


async def balance(db: Database, account: str) -> int:
    """The account's balance (0 for an account no posting touched yet)."""
    return await account_balance(db, account) or 0


async def account_balance(db: Database, account: str) -> int | None:
    """The account's balance, or None when no posting ever touched it (no such account)."""
    async with db.engine.connect() as conn:
        value = await conn.scalar(
            text("SELECT balance FROM ledger_accounts WHERE id = :id"), {"id": account}
        )
    return None if value is None else int(value)


async def total(db: Database) -> int:
    """The sum of every balance: zero, always (the conservation check)."""
    async with db.engine.connect() as conn:
        value = await conn.scalar(text("SELECT COALESCE(SUM(balance), 0) FROM ledger_accounts"))
    return int(value or 0)


async def posted_total(db: Database, account: str) -> int:
    """The sum of the account's entries (must equal its balance)."""
    async with db.engine.connect() as conn:
        value = await conn.scalar(
            text("SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE account_id = :id"),
            {"id": account},
        )
    return int(value or 0)
