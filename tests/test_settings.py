"""Settings: safe embedded defaults, and no default secret outside dev."""

from __future__ import annotations

import pytest

from core.settings import TEST_FAULTS, Settings, require_api_secrets


def test_dev_defaults_work_without_configuration() -> None:
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert s.env == "dev" and s.temporal_address == "127.0.0.1:7233"
    assert s.asyncpg_dsn.startswith("postgresql://")


CODEC = "A" * 43 + "="


def test_a_prod_api_refuses_default_secrets() -> None:
    # Only the API holds the operator keys and the JWT secret (N10): it refuses to start
    # without them; the settings alone (what a worker reads) do not need them.
    settings = Settings(env="prod", codec_key=CODEC, _env_file=None)  # type: ignore[call-arg]
    with pytest.raises(
        SystemExit,
        match="SNG_ADMIN_KEY, SNG_INTERNAL_KEY, SNG_CODEC_ENDPOINT_KEY, SNG_JWT_SECRET",
    ):
        require_api_secrets(settings)


def test_a_prod_api_refuses_short_secrets() -> None:
    settings = Settings(
        env="prod",
        admin_key="a" * 32,
        internal_key="i" * 32,
        codec_endpoint_key="c" * 32,
        jwt_secret="short",
        codec_key=CODEC,
        _env_file=None,
    )  # type: ignore[call-arg]
    with pytest.raises(SystemExit, match="SNG_JWT_SECRET"):
        require_api_secrets(settings)


def test_prod_starts_with_real_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNG_ENV", "prod")
    for door in ("ADMIN", "INTERNAL", "CODEC_ENDPOINT"):
        monkeypatch.setenv(f"SNG_{door}_KEY", door.lower() * 8)
    monkeypatch.setenv("SNG_JWT_SECRET", "j" * 32)
    monkeypatch.setenv("DATABASE_URL", "postgresql+asyncpg://u:p@db:5432/sng")
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert s.env == "prod" and s.database_url.endswith("@db:5432/sng")


OIDC = {
    "oidc_client_id": "sng-play",
    "jwt_issuer": "https://id.example.com",
    "jwt_jwks_url": "https://id.example.com/jwks",
    "jwt_audience": "sng-play",
}


def test_oidc_sign_in_settings_that_work() -> None:
    s = Settings(**OIDC, _env_file=None)  # type: ignore[arg-type]
    assert s.oidc_client_id == "sng-play" and not s.oidc_client_secret.get_secret_value()
    # Plain http for an IdP on this machine, outside prod (the test IdP).
    local = {
        **OIDC,
        "jwt_issuer": "http://localhost:9100",
        "jwt_jwks_url": "http://localhost:9100/jwks",
    }
    assert Settings(**local, env="test", _env_file=None).jwt_issuer  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"jwt_issuer": "sng"}, "SNG_JWT_ISSUER"),  # the default is no IdP's issuer
        ({"jwt_jwks_url": None}, "SNG_JWT_JWKS_URL"),
        ({"jwt_audience": None}, "SNG_JWT_AUDIENCE must be SNG_OIDC_CLIENT_ID"),
        ({"jwt_audience": "sng-api"}, "SNG_JWT_AUDIENCE must be SNG_OIDC_CLIENT_ID"),
        ({"jwt_issuer": "http://id.example.com"}, "must be https"),
        ({"oidc_redirect_url": "https://play.example.com/callback"}, "/play/oidc/callback"),
        ({"oidc_client_id": "", "oidc_client_secret": "s"}, "SNG_OIDC_CLIENT_ID is empty"),
    ],
)
def test_oidc_sign_in_settings_that_cannot_work_are_refused(
    change: dict[str, object], complaint: str
) -> None:
    with pytest.raises(ValueError, match="OIDC sign-in cannot work") as refused:
        Settings(**{**OIDC, **change}, _env_file=None)  # type: ignore[arg-type]
    assert complaint in str(refused.value)


def test_prod_wants_https_even_on_localhost() -> None:
    local = {
        **OIDC,
        "jwt_issuer": "http://localhost:9100",
        "jwt_jwks_url": "http://localhost:9100/jwks",
    }
    with pytest.raises(ValueError, match="must be https"):
        Settings(**local, env="prod", codec_key=CODEC, _env_file=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("switch", "value"),
    [
        ("test_fault_skip_act_write", True),
        ("test_fault_stall_act_write_seconds", 30.0),
        ("test_fault_skip_worker_act_write", True),
        ("test_fault_stall_worker_act_write_seconds", 0.5),
    ],
)
def test_prod_refuses_a_test_fault_switch(
    switch: str, value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every fault switch of the act answers' writers (docs/operations.md), from the
    environment as a deployment would set it; each is accepted outside prod."""
    assert switch in TEST_FAULTS
    monkeypatch.setenv(f"SNG_{switch.upper()}", str(value))
    with pytest.raises(ValueError, match=f"test fault switch on: SNG_{switch.upper()}"):
        Settings(env="prod", codec_key=CODEC, _env_file=None)  # type: ignore[call-arg]
    assert getattr(Settings(env="test", _env_file=None), switch) == value  # type: ignore[call-arg]


def test_every_test_fault_switch_is_refused_in_prod() -> None:
    """A switch added to Settings without joining TEST_FAULTS would start in prod."""
    assert {n for n in Settings.model_fields if n.startswith("test_fault")} == set(TEST_FAULTS)
