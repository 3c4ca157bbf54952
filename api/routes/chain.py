"""What a wallet needs to sign an on-chain entry's permit (issue 29, docs/chain.md).

An entrant pays a ``moneyBackend: "chain"`` tournament with an ERC-2612 permit for the vault,
signed as EIP-712 typed data in their own wallet (``/play/tournaments/{id}/wallet`` builds it
in the browser). The typed data's domain is the token's (its name, version, the chain id and
its address) and the spender is the vault: ``GET /chain/permit-info`` says which, from the
deployment's settings. The value is the tournament's ``entryFee`` (``GET /tournaments/{id}``),
and the owner's nonce is the token's ``nonces(owner)``, which the wallet reads itself
(``eth_call``): this route asks no node. Nothing here is trusted for the payment: the worker
checks the permit's signature against the token's current nonce before anything is sent,
and the vault checks it again.
"""

from __future__ import annotations

from fastapi import APIRouter

from api.deps import SettingsDep
from api.errors import ApiError
from api.openapi import ERRORS
from db.wallets import to_checksum_address
from domain.errors import ErrorCode
from wire.messages import WireModel

router = APIRouter(prefix="/chain", tags=["chain"])

TOKEN_VERSION = "1"
"""The token's EIP-712 domain version (OpenZeppelin's ERC20Permit)."""


class PermitInfo(WireModel):
    """The fixed parts of an entry permit's EIP-712 typed data on this deployment."""

    chain_id: int
    """The domain's ``chainId``: the chain the wallet must be on."""
    token_address: str
    """The domain's ``verifyingContract``: the chip token (ERC-20 with ERC-2612 permit)."""
    token_name: str
    """The domain's ``name``."""
    token_version: str
    """The domain's ``version``."""
    token_decimals: int = 0
    """One token unit is one chip: a permit's ``value`` is the entry fee as it stands."""
    vault_address: str
    """The permit's ``spender``: the tournament vault that pulls the entry."""


@router.get(
    "/permit-info",
    response_model=PermitInfo,
    response_model_by_alias=True,
    summary="The chain, token and vault an entry permit names",
    openapi_extra={ERRORS: [404]},
)
async def permit_info(settings: SettingsDep) -> PermitInfo:
    """Public (every address in it is public on chain). ``404 not_found`` on a deployment
    whose entries are paid from the virtual balance: nothing is paid on chain there."""
    # Imported here: activities.chain_support loads eth_account, which costs an API process
    # seconds at start (db/wallets.py).
    from activities.chain_support import TOKEN_NAME

    if settings.money_backend != "chain":
        raise ApiError(
            ErrorCode.NOT_FOUND,
            "entries on this deployment are paid from the virtual balance, not on chain",
        )
    return PermitInfo(
        chain_id=settings.chain_id,
        token_address=to_checksum_address(settings.token_address),
        token_name=TOKEN_NAME,
        token_version=TOKEN_VERSION,
        vault_address=to_checksum_address(settings.vault_address),
    )
