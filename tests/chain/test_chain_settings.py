"""Settings for the chain backend: complete or refused, and never anvil's public key in prod."""

from __future__ import annotations

import pytest

from core.settings import ANVIL_DEV_OPERATOR_KEY, Settings

CODEC = "A" * 43 + "="
CHAIN = {
    "money_backend": "chain",
    "chain_rpc_url": "http://127.0.0.1:8545",
    "vault_address": "0x" + "22" * 20,
    "token_address": "0x" + "33" * 20,
}
PROD = {
    "env": "prod",
    "admin_key": "a" * 32,
    "internal_key": "i" * 32,
    "codec_endpoint_key": "c" * 32,
    "jwt_secret": "j" * 40,
    "codec_key": CODEC,
}


def test_the_chain_backend_needs_every_setting() -> None:
    with pytest.raises(ValueError, match="SNG_CHAIN_OPERATOR_KEY"):
        Settings(**CHAIN)  # type: ignore[arg-type]
    assert Settings(**CHAIN, chain_operator_key=ANVIL_DEV_OPERATOR_KEY).money_backend == "chain"  # type: ignore[arg-type]
    assert Settings().money_backend == "virtual"


def test_prod_refuses_anvils_public_operator_key() -> None:
    with pytest.raises(ValueError, match="anvil"):
        Settings(
            **PROD, **CHAIN, chain_operator_key=ANVIL_DEV_OPERATOR_KEY.upper().replace("0X", "")
        )  # type: ignore[arg-type]
    ok = Settings(**PROD, **CHAIN, chain_operator_key="0x" + "ab" * 32)  # type: ignore[arg-type]
    assert "ab" * 32 not in repr(ok)
