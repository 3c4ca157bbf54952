"""docker-compose.yml keeps its promises (Docker cannot run here, so we check what it says)."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.settings import Settings
from workflows import search_attributes

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def env_of(service: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in service.get("environment", {}).items()}


def test_every_process_of_the_design_is_a_service(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {
        "postgresql",
        "temporal",
        "temporal-ui",
        "api",
        "worker",
        "migrate",
        "anvil",
        "proxy",
    } <= set(services)
    assert services["temporal"]["environment"]["DB"].startswith("postgres")
    # Two API replicas behind the proxy, which alone takes the port (issue 31, "Beyond one
    # machine"; tests/integration/test_proxy.py runs deploy/nginx.conf in front of two APIs).
    assert services["proxy"]["ports"] == ["8000:8000"]
    assert "ports" not in services["api"] and services["api"]["expose"] == ["8000"]
    assert services["api"]["deploy"]["replicas"] >= 2
    assert services["worker"]["deploy"]["replicas"] >= 2
    assert services["temporal-ui"]["ports"] == ["127.0.0.1:8233:8080"]
    assert services["temporal"]["ports"] == ["127.0.0.1:7233:7233"]
    # The worker scales with --scale worker=N: no fixed name, no host port.
    assert "container_name" not in services["worker"] and "ports" not in services["worker"]


def test_long_running_services_have_healthchecks(compose: dict[str, Any]) -> None:
    for name in ("postgresql", "temporal", "api", "worker", "anvil", "proxy"):
        assert "test" in compose["services"][name]["healthcheck"], name


API_SECRETS = (
    "SNG_ADMIN_KEY",
    "SNG_INTERNAL_KEY",
    "SNG_CODEC_ENDPOINT_KEY",
    "SNG_SERVICE_KEY",
    "SNG_JWT_SECRET",
)
"""What only the API reads: the operator keys (the old single key too) and the JWT secret."""


def test_required_secrets_fail_fast(compose: dict[str, Any]) -> None:
    for name in ("api", "worker", "migrate"):
        env = env_of(compose["services"][name])
        assert env["SNG_ENV"] == "prod"  # prod refuses default secrets at start-up too
        assert "${POSTGRES_PASSWORD:?" in env["DATABASE_URL"]
    api = env_of(compose["services"]["api"])
    for secret in ("SNG_ADMIN_KEY", "SNG_INTERNAL_KEY", "SNG_CODEC_ENDPOINT_KEY", "SNG_JWT_SECRET"):
        assert re.fullmatch(rf"\$\{{{secret}:\?.+\}}", api[secret]), secret
    worker = env_of(compose["services"]["worker"])
    assert re.fullmatch(r"\$\{SNG_DECK_KEY:\?.+\}", worker["SNG_DECK_KEY"])


def test_each_process_gets_only_the_secrets_it_uses(compose: dict[str, Any]) -> None:
    """Security review N10: a compromised worker held every operator key and the JWT secret
    (it could mint player tokens and call /admin). Only the API has them now, and only the
    workers have the deck key (tests/security/test_n10_*.py: a prod worker starts without)."""
    for name, service in compose["services"].items():
        env = env_of(service)
        if name != "api":
            assert not set(API_SECRETS) & set(env), (name, set(API_SECRETS) & set(env))
        if name != "worker":
            assert "SNG_DECK_KEY" not in env, name


def test_environment_names_are_real_settings(compose: dict[str, Any]) -> None:
    known = {f"SNG_{name.upper()}" for name in Settings.model_fields} | {"DATABASE_URL"}
    for name in ("api", "worker", "migrate"):
        unknown = set(env_of(compose["services"][name])) - known
        assert not unknown, (name, unknown)


def test_search_attributes_are_registered(compose: dict[str, Any]) -> None:
    script = " ".join(compose["services"]["temporal-setup"]["command"])
    for key in search_attributes.ALL:
        assert f"{key.name}=" in script


def test_app_services_wait_for_migrations_and_setup(compose: dict[str, Any]) -> None:
    for name in ("api", "worker"):
        deps = compose["services"][name]["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully"
        assert deps["temporal-setup"]["condition"] == "service_completed_successfully"


def test_the_ui_decrypts_through_the_api_codec(compose: dict[str, Any]) -> None:
    ui_env = env_of(compose["services"]["temporal-ui"])
    assert ui_env["TEMPORAL_CODEC_ENDPOINT"].endswith("/codec")
    for name in ("api", "worker", "migrate"):
        assert re.fullmatch(
            r"\$\{SNG_CODEC_KEY:\?.+\}", env_of(compose["services"][name])["SNG_CODEC_KEY"]
        )


def test_optional_profiles(compose: dict[str, Any]) -> None:
    assert compose["services"]["anvil"]["profiles"] == ["chain"]
    assert compose["services"]["otel-collector"]["profiles"] == ["telemetry"]


def test_only_the_proxy_is_published_beyond_loopback(compose: dict[str, Any]) -> None:
    """Security review C2: Temporal's frontend and UI (and the dev chain, the collector) are
    reachable from this host only; the UI cannot terminate, reset or signal."""
    for name, service in compose["services"].items():
        for port in service.get("ports", []):
            if name == "proxy":
                continue
            assert str(port).startswith("127.0.0.1:"), (name, port)
    ui = env_of(compose["services"]["temporal-ui"])
    assert ui["TEMPORAL_DISABLE_WRITE_ACTIONS"] == "true"


def test_the_api_trusts_forwarded_addresses_from_the_proxy_alone(compose: dict[str, Any]) -> None:
    """The rate limits and stream caps count X-Forwarded-For only from the proxy's fixed
    address, on a subnet the file fixes; the proxy replaces the header (never appends)."""
    services = compose["services"]
    proxy_ip = services["proxy"]["networks"]["default"]["ipv4_address"]
    [subnet] = [c["subnet"] for c in compose["networks"]["default"]["ipam"]["config"]]
    assert ipaddress.ip_address(proxy_ip) in ipaddress.ip_network(subnet)
    trusted = env_of(services["api"])["SNG_FORWARDED_ALLOW_IPS"]
    assert trusted == f"${{SNG_FORWARDED_ALLOW_IPS:-{proxy_ip}}}"
    assert services["proxy"]["volumes"] == ["./deploy/nginx.conf:/etc/nginx/nginx.conf:ro"]
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in conf
    assert "proxy_add_x_forwarded_for" not in conf
