"""Settings: safe embedded defaults, and no default secret outside dev."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sng.settings import Settings


def test_dev_defaults_work_without_configuration() -> None:
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert s.env == "dev" and s.temporal_address == "127.0.0.1:7233"
    assert s.asyncpg_dsn.startswith("postgresql://")


def test_prod_refuses_default_secrets() -> None:
    with pytest.raises(ValidationError, match="SNG_SERVICE_KEY, SNG_JWT_SECRET"):
        Settings(env="prod", _env_file=None)  # type: ignore[call-arg]


def test_prod_refuses_short_secrets() -> None:
    with pytest.raises(ValidationError, match="SNG_JWT_SECRET"):
        Settings(env="prod", service_key="s" * 32, jwt_secret="short", _env_file=None)  # type: ignore[call-arg]


def test_prod_starts_with_real_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SNG_ENV", "prod")
    monkeypatch.setenv("SNG_SERVICE_KEY", "k" * 32)
    monkeypatch.setenv("SNG_JWT_SECRET", "j" * 32)
    monkeypatch.setenv("DATABASE_URL", "postgresql+asyncpg://u:p@db:5432/sng")
    s = Settings(_env_file=None)  # type: ignore[call-arg]
    assert s.env == "prod" and s.database_url.endswith("@db:5432/sng")
