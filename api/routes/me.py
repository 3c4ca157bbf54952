"""The calling player's account (an agent's is its owner's, docs/auth.md "Whose money"):
balance, the dev faucet (dev mode only), the wallets bound to it for on-chain entries, and an
agent's Agent Card (the public key its hole cards are sealed to)."""

from __future__ import annotations

import secrets
from datetime import datetime
from urllib.parse import urlsplit

from fastapi import APIRouter, Path, Request
from pydantic import Field, field_validator

from api.auth import CurrentPlayer
from api.deps import DbDep, SettingsDep
from api.errors import ApiError
from api.services.accounts import Balance
from api.state import state_of
from core.card_seal import parse_public_key
from db import agents, ledger, wallets
from db.models import Agent
from domain.errors import ErrorCode
from wire.messages import ADDRESS, WireModel

router = APIRouter(prefix="/me", tags=["me"])

FAUCET_MAX = 100_000


class MyAgent(WireModel):
    """One of the caller's own live agents (never its key): what a CoPilot registration names
    as ``advisorAgentId``."""

    agent_id: str
    name: str
    skills: list[str]
    key_prefix: str
    created_at: datetime


@router.get("/agents", response_model=list[MyAgent], response_model_by_alias=True)
async def my_agents(caller: CurrentPlayer, db: DbDep) -> list[MyAgent]:
    """The live agents the caller owns (an agent's: its owner's), oldest first."""
    return [
        MyAgent(
            agent_id=a.agent_id,
            name=a.name,
            skills=list(a.skills),
            key_prefix=a.key_prefix,
            created_at=a.created_at,
        )
        for a in await agents.owned_by(db, caller.owner)
    ]


class FaucetBody(WireModel):
    amount: int = Field(gt=0, le=FAUCET_MAX, strict=True)


@router.get("/balance", response_model=Balance, response_model_by_alias=True)
async def my_balance(caller: CurrentPlayer, db: DbDep) -> Balance:
    """The caller's account: a player's own; an agent's is its owner's (``accountId`` says
    which), the account its entries are paid from and its refunds, prizes and stacks go back
    to."""
    return await _balance_of(caller, db)


async def _balance_of(caller: CurrentPlayer, db: DbDep) -> Balance:
    account = ledger.user_account(caller.owner)
    return Balance(
        user_id=caller.user_id, balance=await ledger.balance(db, account), account_id=account
    )


@router.post("/faucet", response_model=Balance, response_model_by_alias=True)
async def faucet(
    body: FaucetBody, caller: CurrentPlayer, db: DbDep, settings: SettingsDep
) -> Balance:
    """Free virtual chips for trying things out, into the caller's account (an agent's: its
    owner's, which pays its entries); refused outside dev mode."""
    if settings.env != "dev":
        raise ApiError(ErrorCode.FORBIDDEN, "the faucet only runs in dev mode")
    await ledger.transfer(
        db,
        key=f"faucet:{secrets.token_hex(8)}",
        source=ledger.MINT,
        destination=ledger.user_account(caller.owner),
        amount=body.amount,
        memo="dev faucet",
    )
    return await _balance_of(caller, db)


# -- wallets: bound by a signed challenge (EIP-4361), db/wallets.py ----------------------------


class ChallengeBody(WireModel):
    address: str = Field(pattern=ADDRESS, max_length=42)


class ChallengeView(WireModel):
    message: str
    """The exact text to sign with the wallet (``personal_sign``, EIP-191)."""
    nonce: str
    expires_at: datetime


class BindBody(WireModel):
    nonce: str = Field(pattern=r"^[0-9a-f]{32}$", max_length=32)
    signature: str = Field(pattern=r"^0x[0-9a-fA-F]{130}$", max_length=132)


class WalletView(WireModel):
    address: str
    bound_at: datetime


@router.post("/wallets/challenge", response_model=ChallengeView, response_model_by_alias=True)
async def wallet_challenge(
    body: ChallengeBody, request: Request, caller: CurrentPlayer, db: DbDep, settings: SettingsDep
) -> ChallengeView:
    """Step 1 of binding a wallet: a message for the wallet to sign, valid 10 minutes, once.
    It names this service as ``SNG_PUBLIC_URL`` says (EIP-4361's domain and URI, which the
    wallet checks against the page asking), and only a request to that host gets one (422
    otherwise): a phishing page cannot get a message naming itself (security review 3, S5)."""
    domain, uri = request.url.netloc, str(request.base_url).rstrip("/")
    if settings.public_url:
        public = urlsplit(settings.public_url)
        domain, uri = public.netloc, f"{public.scheme}://{public.netloc}"
        if request.headers.get("host", "").lower() != public.netloc.lower():
            raise ApiError(
                ErrorCode.VALIDATION_ERROR,
                f"wallet challenges are issued at {public.netloc} only",
            )
    challenge = await wallets.issue_challenge(
        db,
        user_id=caller.owner,
        address=body.address,
        domain=domain,
        uri=uri,
        chain_id=settings.chain_id,
    )
    return ChallengeView(
        message=challenge.message, nonce=challenge.nonce, expires_at=challenge.expires_at
    )


@router.post("/wallets", response_model=WalletView, response_model_by_alias=True, status_code=201)
async def bind_wallet(body: BindBody, caller: CurrentPlayer, db: DbDep) -> WalletView:
    """Step 2: the wallet's signature over the challenge's message binds it to the caller's
    account (an agent binds to its owner's: the owner pays its agents' entries)."""
    binding = await wallets.bind(
        db, user_id=caller.owner, nonce=body.nonce, signature=body.signature
    )
    return WalletView(address=binding.address, bound_at=binding.bound_at)


@router.get("/wallets", response_model=list[WalletView], response_model_by_alias=True)
async def my_wallets(caller: CurrentPlayer, db: DbDep) -> list[WalletView]:
    return [
        WalletView(address=b.address, bound_at=b.bound_at)
        for b in await wallets.wallets_of(db, caller.owner)
    ]


@router.delete("/wallets/{address}", status_code=204)
async def unbind_wallet(
    caller: CurrentPlayer, db: DbDep, address: str = Path(pattern=ADDRESS, max_length=42)
) -> None:
    """Entries already paid keep their wallet (refunds and prizes still go to it)."""
    if not await wallets.unbind(db, address, caller.owner):
        raise ApiError(ErrorCode.NOT_FOUND, "no such wallet bound to you")


# -- the Agent Card: where an agent's hole cards are sealed to (docs/fairness.md) -------------


class AgentCardBody(WireModel):
    public_key: str = Field(min_length=1, max_length=64)
    """X25519 public key, 32 bytes in base64 (libsodium ``crypto_box`` keys)."""

    @field_validator("public_key")
    @classmethod
    def _an_x25519_key(cls, value: str) -> str:
        parse_public_key(value)  # a CardKeyError is a ValueError: 422 on the field
        return value


class AgentCard(WireModel):
    agent_id: str
    name: str
    skills: list[str]
    public_key: str | None
    """While set, this agent's hole cards reach it only as ``sealedHoleCards`` (sealed boxes
    to this key) in game state and streams; None: in clear, as for any player."""
    card_key_changed_at: datetime | None = None
    """When the key was last put on, replaced or taken off (None: never): an agent (or its
    owner) that did not change it knows its key is in other hands (security review N8)."""


def _agent_only(caller: CurrentPlayer) -> str:
    if not caller.is_agent or caller.agent_id is None:
        raise ApiError(ErrorCode.FORBIDDEN, "only an agent has an Agent Card")
    return caller.agent_id


def _card_of(agent: Agent | None, agent_id: str) -> AgentCard:
    if agent is None:
        raise ApiError(ErrorCode.AGENT_NOT_FOUND, f"no agent {agent_id!r}")
    return AgentCard(
        agent_id=agent.agent_id,
        name=agent.name,
        skills=list(agent.skills),
        public_key=agent.card_public_key,
        card_key_changed_at=agent.card_key_changed_at,
    )


async def _set_card_key(request: Request, db: DbDep, agent_id: str, key: str | None) -> AgentCard:
    card = _card_of(await agents.set_card_key(db, agent_id, key), agent_id)
    state_of(request.app).read_model.forget_card_key(agent_id)
    return card


@router.get("/agent-card", response_model=AgentCard, response_model_by_alias=True)
async def my_agent_card(caller: CurrentPlayer, db: DbDep) -> AgentCard:
    agent_id = _agent_only(caller)
    return _card_of(await agents.by_id(db, agent_id), agent_id)


@router.put("/agent-card", response_model=AgentCard, response_model_by_alias=True)
async def put_agent_card_key(
    request: Request, body: AgentCardBody, caller: CurrentPlayer, db: DbDep
) -> AgentCard:
    """Put a public key on the caller's Agent Card: from the next read on, its hole cards
    come sealed to it, on every replica. Between hands only: while the agent is dealt into a
    running hand a change is ``409 card_key_locked`` (the same key again is a no-op)."""
    return await _set_card_key(request, db, _agent_only(caller), body.public_key)


@router.delete("/agent-card/public-key", response_model=AgentCard, response_model_by_alias=True)
async def drop_agent_card_key(request: Request, caller: CurrentPlayer, db: DbDep) -> AgentCard:
    """Take the key off: hole cards come in clear again (between hands only, as a PUT)."""
    return await _set_card_key(request, db, _agent_only(caller), None)
