"""Settings: safe embedded defaults, and no default secret outside dev."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.settings import Settings


def test_dev_defaults_work_without_configuration() -> None:
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert s.env == "dev" and s.temporal_address == "127.0.0.1:7233"
    assert s.asyncpg_dsn.startswith("postgresql://")


def test_prod_refuses_default_secrets() -> None:
    with pytest.raises(
        ValidationError,
        match="SNG_ADMIN_KEY, SNG_INTERNAL_KEY, SNG_CODEC_ENDPOINT_KEY, SNG_JWT_SECRET",
    ):
        Settings(env="prod", _env_file=None)  # type: ignore[call-arg]


def test_prod_refuses_short_secrets() -> None:
    with pytest.raises(ValidationError, match="SNG_JWT_SECRET"):
        Settings(
            env="prod",
            admin_key="a" * 32,
            internal_key="i" * 32,
            codec_endpoint_key="c" * 32,
            jwt_secret="short",
            _env_file=None,
        )  # type: ignore[call-arg]


def test_prod_starts_with_real_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNG_ENV", "prod")
    for door in ("ADMIN", "INTERNAL", "CODEC_ENDPOINT"):
        monkeypatch.setenv(f"SNG_{door}_KEY", door.lower() * 8)
    monkeypatch.setenv("SNG_JWT_SECRET", "j" * 32)
    monkeypatch.setenv("DATABASE_URL", "postgresql+asyncpg://u:p@db:5432/sng")
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert s.env == "prod" and s.database_url.endswith("@db:5432/sng")
