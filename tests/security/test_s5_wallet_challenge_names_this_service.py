"""S5 (security review 3): the wallet-binding message named whatever Host the caller sent.

A phishing page at ``wallet-login.evil.example`` fetched a challenge for the victim's address
with its own ``Host``; the EIP-4361 message then began ``wallet-login.evil.example wants you
to sign in``, so the wallet's domain check matched the phishing origin and showed no warning,
and the signature bound the victim's wallet to the attacker (``201``). Now the message names
``SNG_PUBLIC_URL`` (required in prod) and only a request to that host gets one; the OIDC
callback is configuration too (``SNG_OIDC_REDIRECT_URL`` required in prod), and the shipped
nginx drops unknown hosts (tests/integration/test_proxy.py).
"""

from __future__ import annotations

import httpx
import pytest
from eth_account import Account

from core.settings import Settings, require_api_secrets
from tests.conftest import serve_api
from tests.integration.helpers import player

PUBLIC = "https://poker.example"


async def test_a_challenge_names_the_service_and_only_its_host_gets_one(
    settings: Settings, worker: object
) -> None:
    wallet = Account.create().address
    configured = settings.model_copy(update={"public_url": PUBLIC})
    async with serve_api(configured) as url, httpx.AsyncClient(base_url=url) as http:
        headers = player(configured, "s5-victim")
        phish = await http.post(
            "/me/wallets/challenge",
            json={"address": wallet},
            headers={**headers, "Host": "wallet-login.evil.example"},
        )
        assert phish.status_code == 422, phish.text
        assert phish.json()["code"] == "validation_error"
        assert "poker.example" in phish.json()["message"]
        ours = await http.post(
            "/me/wallets/challenge",
            json={"address": wallet},
            headers={**headers, "Host": "poker.example"},
        )
        assert ours.status_code == 200, ours.text
        message = ours.json()["message"]
        assert message.startswith("poker.example wants you to sign in"), message
        assert f"URI: {PUBLIC}" in message


STRONG = {
    "admin_key": "a" * 32,
    "internal_key": "i" * 32,
    "codec_endpoint_key": "c" * 32,
    "jwt_secret": "j" * 32,
    "codec_key": "A" * 43 + "=",
}


@pytest.mark.parametrize(
    ("public_url", "why"),
    [("", "SNG_PUBLIC_URL"), ("http://poker.example", "https"), (PUBLIC + "/x", "no path")],
)
def test_a_prod_api_needs_its_public_url(public_url: str, why: str) -> None:
    settings = Settings(env="prod", public_url=public_url, _env_file=None, **STRONG)  # type: ignore[call-arg]
    with pytest.raises(SystemExit, match=why):
        require_api_secrets(settings)
    require_api_secrets(settings.model_copy(update={"public_url": PUBLIC}))


def test_prod_oidc_needs_its_redirect_url() -> None:
    oidc = {
        "oidc_client_id": "sng",
        "jwt_audience": "sng",
        "jwt_issuer": "https://idp.example",
        "jwt_jwks_url": "https://idp.example/jwks",
    }
    with pytest.raises(ValueError, match="SNG_OIDC_REDIRECT_URL"):
        Settings(env="prod", _env_file=None, **STRONG, **oidc)  # type: ignore[call-arg]
    Settings(
        env="prod",
        _env_file=None,
        oidc_redirect_url=PUBLIC + "/play/oidc/callback",
        **STRONG,
        **oidc,
    )  # type: ignore[call-arg]
