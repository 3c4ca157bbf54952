"""L6 (security review): the admin pages' login had no throttle.

``/ui/login`` compared the typed key and answered at once, as often as asked: an online
guessing loop against the operators' key. Now ten wrong keys per address per minute, then
``429`` (even for the right key) until the window moves on. The admin key must be 16+
characters in prod (test_m6_one_key_per_door.py), and sessions expire after eight hours.
"""

from __future__ import annotations

import httpx
from temporalio.worker import Worker

from core.settings import Settings
from tests.conftest import serve_api


async def test_wrong_admin_keys_are_throttled_per_address(
    settings: Settings, worker: Worker
) -> None:
    async with serve_api(settings) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
        right = settings.key("admin")
        r = await http.post("/ui/login", data={"serviceKey": right})
        assert r.status_code == 303  # right keys do not count
        for n in range(10):
            r = await http.post("/ui/login", data={"serviceKey": f"guess-{n}"})
            assert r.status_code == 401, (n, r.status_code)
        r = await http.post("/ui/login", data={"serviceKey": "guess-10"})
        assert r.status_code == 429 and "wait a minute" in r.text
        r = await http.post("/ui/login", data={"serviceKey": right})
        assert r.status_code == 429  # no oracle while throttled
