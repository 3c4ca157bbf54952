"""The one settings object shared by the API, the worker and the CLI.

Every value comes from the environment (or a ``.env`` file) with a safe embedded default, so
``sng dev`` works on a fresh machine; outside dev mode the process refuses to start while a
secret still has its development default.
"""

from __future__ import annotations

import base64
from functools import lru_cache
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEV_SERVICE_KEY = "dev-service-key"
DEV_JWT_SECRET = "dev-jwt-secret-change-me-0123456789abcdef"
ANVIL_DEV_OPERATOR_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"
"""anvil's account 0 from the public test mnemonic: the dev chain's operator, refused in prod."""


TEST_FAULTS = (
    "test_fault_skip_act_write",
    "test_fault_stall_act_write_seconds",
    "test_fault_skip_worker_act_write",
    "test_fault_stall_worker_act_write_seconds",
)
"""The test-only fault switches (below): any of them on refuses ``SNG_ENV=prod``."""
FAULT_HELD = "test fault: act answer %s v%s held %.0f s before its write"
"""Logged when a stall switch holds a write (the crash tests kill the process on it)."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="SNG_",
        env_file=".env",
        extra="ignore",
        populate_by_name=True,
        hide_input_in_errors=True,  # a refusal must not print the secrets it was given
    )

    env: Literal["dev", "test", "prod"] = "dev"
    data_dir: Path = Path(".sng")

    # Temporal: a local dev server by default; a cluster or Temporal Cloud in production.
    temporal_address: str = "127.0.0.1:7233"
    temporal_namespace: str = "default"
    temporal_task_queue: str = "sng-tournaments"
    temporal_tls: bool = False
    temporal_tls_cert: Path | None = None
    temporal_tls_key: Path | None = None
    temporal_api_key: str | None = None
    temporal_ui_url: str = "http://127.0.0.1:8233"

    # PostgreSQL: the embedded server `sng dev` starts, or any server in production.
    database_url: str = Field(
        default="postgresql+asyncpg://postgres@127.0.0.1:5433/sng",
        validation_alias="DATABASE_URL",
        repr=False,  # it carries the database password
    )

    api_host: str = "127.0.0.1"
    api_port: int = 8000
    public_url: str = ""
    """The service's public base URL (``https://poker.example``): the domain and URI a wallet's
    sign-in challenge names, and the only host that issues one (security review 3, S5: the
    challenge named whatever Host the caller sent, so a phishing page got a message naming
    itself). Required in prod; empty outside prod: the request's own host."""
    # How long the API keeps an idle keep-alive connection open. Longer than any client's own
    # idle expiry (httpx: 5 s) and a load balancer's idle timeout (often 60 s), so a client
    # never sends a request on a connection the server is closing at that instant: with
    # uvicorn's default of 5 s, equal to httpx's, 100 pollers saw "server disconnected".
    api_keepalive_seconds: int = Field(default=75, ge=1, le=3600)
    temporal_port: int = 7233
    temporal_ui_port: int = 8233
    postgres_port: int = 5433
    chain_port: int = 8545
    """`sng dev --chain anvil`'s RPC port."""

    # Secrets (SecretStr: never in a repr, a log or a validation message). The development
    # defaults are public; prod refuses them. Three operator keys, each opening one door
    # (security review M6): admin (the /admin API, room create/close, the admin pages),
    # internal (/internal, the agent-hosting platform) and codec (the /codec endpoint the
    # Temporal UI calls). In dev and test an unset one falls back to service_key; a prod API
    # needs all three set and different, and ignores service_key (``require_api_secrets``).
    # Only the API reads these and the JWT secret: workers start without them (N10).
    service_key: SecretStr = SecretStr(DEV_SERVICE_KEY)
    admin_key: SecretStr = SecretStr("")
    internal_key: SecretStr = SecretStr("")
    codec_endpoint_key: SecretStr = SecretStr("")
    jwt_secret: SecretStr = SecretStr(DEV_JWT_SECRET)
    jwt_issuer: str = "sng"
    # Players' tokens from an identity provider: its JWKS URL (RS/ES/EdDSA tokens are checked
    # against it; HS256 ones against jwt_secret) and, when its tokens carry one, the audience.
    jwt_jwks_url: str | None = None
    jwt_audience: str | None = None
    # Signing in on the players' pages with that identity provider (api/play/oidc.py,
    # docs/play.md): the OIDC authorization code flow with PKCE. Empty client id: off. The
    # issuer is jwt_issuer and the keys jwt_jwks_url, so the ID token the IdP issues is a
    # token the players' API accepts; jwt_audience must then be the client id. The secret is
    # for a confidential client; a public one uses PKCE alone.
    oidc_client_id: str = ""
    oidc_client_secret: SecretStr = SecretStr("")
    oidc_provider_name: str = ""
    """What the sign-in button calls the IdP ("Sign in with ..."); empty: the issuer's host."""
    oidc_redirect_url: str = ""
    """The callback URL registered with the IdP; empty: this API's own
    ``<scheme>://<host>/play/oidc/callback`` as the request reached it."""

    # Abuse limits (api/ratelimit.py, api/streams.py; security reviews M4, N3). A rate is what
    # the `limits` library parses ("100/second", "6000 per minute"); empty turns that limit
    # off. The credential rate counts a verified identity (a player, an agent, an operator
    # door), never a header's bytes.
    rate_limit_ip: str = "100/second"
    rate_limit_credential: str = "20/second"
    max_streams: int = Field(default=1_000, ge=1)
    """Open streams (SSE and WebSocket) per API replica, all clients together."""
    max_streams_per_client: int = Field(default=4, ge=1)
    """Open streams per client: its verified identity, or its address for anonymous ones."""
    ws_max_message_bytes: int = Field(default=65536, ge=1024)
    """The largest WebSocket message a client may send; a bigger one closes the socket with
    1009 before it is parsed (our messages are small JSON: ``act``, ``seed``)."""
    max_streams_per_address: int = Field(default=100, ge=1)
    """Open streams from one address, whoever they are for (never more than half of
    ``max_streams``)."""
    # The longest a game-state long-poll (waitForChange) holds its request, whatever
    # ``timeout`` asks (the wire allows up to 30 s): a cap on idle connections per replica.
    long_poll_max_seconds: float = Field(default=30.0, ge=0, le=30)
    # Pre-play game-state long-polls one client (its verified identity) holds at a time per
    # replica (api/preplay.py; security review N5); one more is 429 too_many_long_polls.
    max_long_polls_per_client: int = Field(default=4, ge=1)

    # `sng api` behind a reverse proxy (security review N10): the client address the limits
    # count is X-Forwarded-For's, but only on connections from these addresses (comma
    # separated, CIDR allowed, "*" trusts anyone). Empty: uvicorn's own default, the
    # FORWARDED_ALLOW_IPS environment variable or else 127.0.0.1 and ::1. proxy_headers=false
    # ignores proxy headers from everyone.
    proxy_headers: bool = True
    forwarded_allow_ips: str = ""

    # Operators: force-end needs the current level to be this old (the seed's five minutes),
    # and the admin pages' tournament list refreshes itself this often.
    force_end_min_level_age_seconds: int = Field(default=300, ge=0)
    admin_refresh_seconds: float = Field(default=10.0, gt=0)

    # The payout reconciler's Temporal Schedule (worker.ensure_reconciler_schedule,
    # docs/operations.md): each worker creates or updates it at startup unless this is off
    # (then `sng schedules` does it).
    reconciler_schedule: bool = True

    # Payload encryption (core/codec.py). Empty key: dev and test use <data_dir>/codec.key,
    # created once; prod refuses to start. Retired keys stay listed for decryption only.
    codec_key: SecretStr = SecretStr("")
    codec_key_id: str = "k1"
    codec_previous_keys: SecretStr = SecretStr("")
    # The worker-only key that seals each deck's secret inside the payloads (core/deck_vault.py,
    # docs/fairness.md): the codec key opens a payload, not the secret in it. Read by workers
    # (and replayers) only; empty: dev and test use <data_dir>/deck.key, prod workers refuse.
    deck_key: SecretStr = SecretStr("")
    # Workers and clients refuse payloads that are not sealed (anyone who reaches Temporal can
    # write plaintext ones). True only for a migration window over histories written before
    # encryption was on; never in normal operation (docs/security.md).
    codec_accept_plaintext: bool = False
    # Payloads are bound to their workflow, an activity's to the activity (AES-GCM associated
    # data); one sealed before that (no binding, or an activity's bound only to its workflow)
    # opens only with this on: a migration window, like the above (docs/versioning.md).
    codec_accept_unbound: bool = False

    # Test-only fault switches for the two writers of an act's answer (docs/read-model.md,
    # "Act answers"; docs/operations.md, "Fault switches"). Refused in prod. The API: answer
    # without writing the snapshot (as if the write were lost), or wait this long between the
    # Update's answer and its write (a test kills the process meanwhile). The worker: write
    # no act answer, or wait this long before each write (likewise).
    test_fault_skip_act_write: bool = False
    test_fault_stall_act_write_seconds: float = Field(default=0.0, ge=0, le=3600)
    test_fault_skip_worker_act_write: bool = False
    test_fault_stall_worker_act_write_seconds: float = Field(default=0.0, ge=0, le=3600)

    # Telemetry, all off by default: the worker's SDK metrics for Prometheus ("host:port")
    # and OTLP/HTTP trace export (e.g. "http://127.0.0.1:4318/v1/traces").
    worker_metrics_address: str = ""
    otlp_endpoint: str = ""
    otel_service_name: str = "sng"

    # Money: the virtual-chip ledger, or entry fees and prizes through the vault on an EVM
    # chain (docs/chain.md). The operator key signs the vault's transactions: a secret.
    money_backend: Literal["virtual", "chain"] = "virtual"
    chain_rpc_url: str = Field(default="", repr=False)  # providers put API keys in it
    chain_operator_key: SecretStr = SecretStr("")
    vault_address: str = ""
    token_address: str = ""
    chain_start_block: int = 0
    chain_confirmations: int = 1
    chain_id: int = 31337
    """The chain the wallet-binding challenges name (EIP-4361 ``Chain ID``); anvil's by default."""

    def key(self, door: Literal["admin", "internal", "codec"]) -> str:
        """The operator key that opens ``door`` (see the secrets above)."""
        own = {
            "admin": self.admin_key,
            "internal": self.internal_key,
            "codec": self.codec_endpoint_key,
        }[door].get_secret_value()
        if own or self.env == "prod":
            return own
        return self.service_key.get_secret_value()

    @field_validator("rate_limit_ip", "rate_limit_credential")
    @classmethod
    def _a_rate_limits_understands(cls, value: str) -> str:
        if value:
            from limits import parse

            parse(value)  # raises ValueError on "100 per fortnight"
        return value

    @model_validator(mode="after")
    def _refuse_test_faults_in_prod(self) -> Settings:
        on = [
            name
            for name in TEST_FAULTS
            if getattr(self, name) != type(self).model_fields[name].default
        ]
        if self.env == "prod" and on:
            raise ValueError(
                "refusing to start in prod with a test fault switch on: "
                + ", ".join(f"SNG_{name.upper()}" for name in on)
            )
        return self

    @model_validator(mode="after")
    def _refuse_missing_codec_key_outside_dev(self) -> Settings:
        codec_key = self.codec_key.get_secret_value()
        if codec_key:
            try:
                size = len(base64.b64decode(codec_key.strip(), validate=True))
            except ValueError:
                size = -1
            if size != 32:
                raise ValueError(
                    "SNG_CODEC_KEY must be 32 bytes in base64 (python -m core.codec prints one)"
                )
        elif self.env == "prod":
            raise ValueError(
                "refusing to start in prod without SNG_CODEC_KEY (python -m core.codec prints one)"
            )
        return self

    @model_validator(mode="after")
    def _refuse_incomplete_or_dev_chain_settings(self) -> Settings:
        if self.money_backend != "chain":
            return self
        key = self.chain_operator_key.get_secret_value()
        missing = [
            name
            for name, value in (
                ("SNG_CHAIN_RPC_URL", self.chain_rpc_url),
                ("SNG_CHAIN_OPERATOR_KEY", key),
                ("SNG_VAULT_ADDRESS", self.vault_address),
                ("SNG_TOKEN_ADDRESS", self.token_address),
            )
            if not value
        ]
        if missing:
            raise ValueError("the chain money backend needs " + ", ".join(missing))
        if self.env == "prod" and key.lower().removeprefix("0x") == ANVIL_DEV_OPERATOR_KEY[2:]:
            raise ValueError("refusing to start in prod with anvil's public dev key as operator")
        return self

    @model_validator(mode="after")
    def _refuse_oidc_settings_that_cannot_work(self) -> Settings:
        problems = oidc_problems(self)
        if problems:
            raise ValueError("OIDC sign-in cannot work: " + "; ".join(problems))
        return self

    @property
    def asyncpg_dsn(self) -> str:
        """The URL without SQLAlchemy's driver suffix, for asyncpg and psql."""
        return self.database_url.replace("postgresql+asyncpg://", "postgresql://", 1)


OIDC_CALLBACK_PATH = "/play/oidc/callback"
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def _url_problem(name: str, url: str, *, prod: bool) -> str | None:
    """Why ``url`` cannot be an identity provider's or our own absolute URL, or None: https
    (plain http only for a loopback host outside prod), a host, no query or fragment."""
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return f"{name} must be an absolute https URL (it is {url!r})"
    if parts.query or parts.fragment:
        return f"{name} must have no query or fragment"
    if parts.scheme == "http" and (prod or parts.hostname not in LOOPBACK_NAMES):
        return f"{name} must be https (plain http only for localhost outside prod)"
    return None


def oidc_problems(settings: Settings) -> list[str]:
    """What keeps the OIDC sign-in settings from working (empty: they work, or it is off)."""
    if not settings.oidc_client_id:
        if settings.oidc_client_secret.get_secret_value():
            return ["SNG_OIDC_CLIENT_SECRET is set but SNG_OIDC_CLIENT_ID is empty"]
        return []
    prod = settings.env == "prod"
    problems = [
        problem
        for problem in (
            _url_problem("SNG_JWT_ISSUER (the IdP's issuer)", settings.jwt_issuer, prod=prod),
            _url_problem("SNG_JWT_JWKS_URL", settings.jwt_jwks_url, prod=prod)
            if settings.jwt_jwks_url
            else "SNG_JWT_JWKS_URL (the IdP's key set) must be set",
            _url_problem("SNG_OIDC_REDIRECT_URL", settings.oidc_redirect_url, prod=prod)
            if settings.oidc_redirect_url
            # Never the Host a request names (security review 3, S5).
            else (
                "SNG_OIDC_REDIRECT_URL (the callback registered with the IdP) must be set in prod"
                if prod
                else None
            ),
        )
        if problem
    ]
    if settings.jwt_audience != settings.oidc_client_id:
        problems.append(
            "SNG_JWT_AUDIENCE must be SNG_OIDC_CLIENT_ID (an ID token's audience is the client"
            " id, and the session is that token)"
        )
    redirect = settings.oidc_redirect_url
    if redirect and urlsplit(redirect).path != OIDC_CALLBACK_PATH:
        problems.append(f"SNG_OIDC_REDIRECT_URL's path must be {OIDC_CALLBACK_PATH}")
    return problems


@lru_cache
def get_settings() -> Settings:
    return Settings()


def require_api_secrets(settings: Settings) -> None:
    """The API holds the operator keys and the JWT secret; nothing else does (security review
    N10: workers held every operator key and the JWT secret, so a compromised worker could
    mint player tokens and call /admin). So the API, and only the API, refuses to start in prod
    while one is missing, a public default, short (under 16 characters), or shared by two
    doors; a prod worker starts without them (it reads none of them)."""
    if settings.env != "prod":
        return
    keys = {
        "SNG_ADMIN_KEY": settings.key("admin"),
        "SNG_INTERNAL_KEY": settings.key("internal"),
        "SNG_CODEC_ENDPOINT_KEY": settings.key("codec"),
    }
    weak = [
        name
        for name, value, default in (
            *((name, value, DEV_SERVICE_KEY) for name, value in keys.items()),
            ("SNG_JWT_SECRET", settings.jwt_secret.get_secret_value(), DEV_JWT_SECRET),
        )
        if value == default or len(value) < 16
    ]
    if weak:
        raise SystemExit(
            "the API refuses to start in prod with missing, default or short secrets: "
            + ", ".join(weak)
        )
    if len(set(keys.values())) < len(keys):
        raise SystemExit(
            "the API refuses to start in prod with one key for several doors: "
            + ", ".join(keys)
            + " must all differ (docs/security.md)"
        )
    problem = (
        _url_problem("SNG_PUBLIC_URL", settings.public_url, prod=True)
        if settings.public_url
        else "SNG_PUBLIC_URL (this service's public https URL) must be set"
    )
    if problem is None and urlsplit(settings.public_url).path.strip("/"):
        problem = "SNG_PUBLIC_URL is a base URL: no path"
    if problem is not None:
        raise SystemExit(f"the API refuses to start in prod: {problem} (docs/security.md)")


def refuse_implicit_dev(settings: Settings, command: str) -> None:
    """``sng api`` and ``sng worker`` are production commands: they run with the public dev
    secrets only when asked to (``SNG_ENV=dev`` or ``test`` set explicitly, as ``sng dev`` and
    the tests do), never because nobody set ``SNG_ENV`` (security review M1)."""
    if settings.env == "prod" or "env" in settings.model_fields_set:
        return
    raise SystemExit(
        f"{command} is a production command and SNG_ENV is not set: set SNG_ENV=prod with real"
        " secrets (SNG_ADMIN_KEY, SNG_INTERNAL_KEY, SNG_CODEC_ENDPOINT_KEY, SNG_JWT_SECRET,"
        " SNG_CODEC_KEY), or SNG_ENV=dev to run it"
        " locally with the public dev secrets (sng dev does that for you)"
    )
