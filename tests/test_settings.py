"""Settings: safe embedded defaults, and no default secret outside dev."""

from __future__ import annotations

import pytest

from core.settings import Settings, require_api_secrets


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
