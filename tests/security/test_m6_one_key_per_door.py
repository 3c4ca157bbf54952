"""M6 (security review): one key opened everything.

``SNG_SERVICE_KEY`` was the admin API (ledger credit included), ``/internal``, the admin
pages' login and the codec endpoint. The codec endpoint is called by the Temporal UI, so the
key sits in the UI's configuration (or every operator's browser): whoever read it there could
mint chips. Now each door has its own key (``SNG_ADMIN_KEY``, ``SNG_INTERNAL_KEY``,
``SNG_CODEC_ENDPOINT_KEY``), each opens only its door, and prod refuses to start with a key
shared by two doors.
"""

from __future__ import annotations

import base64
import json
import uuid

import httpx
import pytest
from pydantic import SecretStr

from core.settings import Settings
from tests.conftest import serve_api

ADMIN, INTERNAL, CODEC = (f"{door}-{uuid.uuid4().hex}" for door in ("admin", "internal", "codec"))


def _plain(text: str) -> dict[str, object]:
    payload = {
        "metadata": {"encoding": base64.b64encode(b"json/plain").decode()},
        "data": base64.b64encode(json.dumps(text).encode()).decode(),
    }
    return {"payloads": [payload]}


async def _doors(http: httpx.AsyncClient, key: str) -> dict[str, int]:
    """The status each door answers for ``key``."""
    header = {"X-Service-Key": key}
    credit = {"userId": f"m6-{uuid.uuid4().hex[:6]}", "amount": 1, "idempotencyKey": key[:20]}
    internal = {"tableId": "no-such-table", "agentId": "agent-none"}
    login = await http.post("/ui/login", data={"serviceKey": key})
    return {
        "admin": (await http.post("/admin/ledger/credit", json=credit, headers=header)).status_code,
        "internal": (
            await http.post("/internal/tournament-register", json=internal, headers=header)
        ).status_code,
        "codec": (await http.post("/codec/encode", json=_plain("x"), headers=header)).status_code,
        "ui": login.status_code,
    }


async def test_each_key_opens_only_its_own_door(settings: Settings) -> None:
    separate = settings.model_copy(
        update={
            "admin_key": SecretStr(ADMIN),
            "internal_key": SecretStr(INTERNAL),
            "codec_endpoint_key": SecretStr(CODEC),
        }
    )
    async with serve_api(separate) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        admin = await _doors(http, ADMIN)
        internal = await _doors(http, INTERNAL)
        codec = await _doors(http, CODEC)
        legacy = await _doors(http, settings.service_key.get_secret_value())
    assert admin == {"admin": 200, "internal": 401, "codec": 401, "ui": 303}, admin
    # An unknown table is a coded 404 from inside the door: the key was accepted.
    assert internal == {"admin": 401, "internal": 404, "codec": 401, "ui": 401}, internal
    # What the Temporal UI holds decodes payloads and nothing else: no chips, no seats.
    assert codec == {"admin": 401, "internal": 401, "codec": 200, "ui": 401}, codec
    # Once the doors have keys, the old catch-all key opens none of them.
    assert legacy == {"admin": 401, "internal": 401, "codec": 401, "ui": 401}, legacy


STRONG = {"jwt_secret": "j" * 32, "codec_key": base64.b64encode(b"k" * 32).decode()}


@pytest.mark.parametrize(
    "keys",
    [
        {"service_key": "s" * 32},  # the old single key: no door has its own
        {"admin_key": "a" * 32, "internal_key": "a" * 32, "codec_endpoint_key": "c" * 32},
        {"admin_key": "a" * 32, "internal_key": "i" * 32, "codec_endpoint_key": "a" * 32},
        {"admin_key": "a" * 32, "internal_key": "i" * 32},  # the codec endpoint has no key
    ],
    ids=["single-key", "admin-is-internal", "admin-is-codec", "missing-codec"],
)
def test_prod_refuses_a_key_shared_by_two_doors_or_a_door_without_one(
    keys: dict[str, str],
) -> None:
    from api.app import create_app

    settings = Settings(env="prod", _env_file=None, **STRONG, **keys)  # type: ignore[call-arg]
    with pytest.raises(SystemExit) as info:  # the API, which holds the keys, will not start
        create_app(settings)
    for value in {*keys.values(), *STRONG.values()}:
        assert value not in str(info.value)  # a refusal never prints a secret


def test_prod_starts_with_three_keys_and_never_prints_them() -> None:
    keys = {"admin_key": "a" * 32, "internal_key": "i" * 32, "codec_endpoint_key": "c" * 32}
    settings = Settings(env="prod", _env_file=None, **STRONG, **keys)  # type: ignore[call-arg]
    assert settings.key("admin") == "a" * 32 and settings.key("codec") == "c" * 32
    shown = repr(settings) + str(settings.model_dump())
    for value in {*keys.values(), *STRONG.values()}:
        assert value not in shown
