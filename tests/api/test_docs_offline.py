"""``/docs`` and ``/redoc`` work on a machine with no way out: every script, style and icon
they load is served by the API itself (FastAPI's defaults came from a CDN: blank pages)."""

from __future__ import annotations

import re

import httpx


async def test_the_docs_pages_load_nothing_from_elsewhere(api_url: str) -> None:
    async with httpx.AsyncClient(base_url=api_url, timeout=15) as http:
        for page in ("/docs", "/redoc"):
            r = await http.get(page)
            assert r.status_code == 200, (page, r.text)
            assets = re.findall(r'(?:src|href)\s*=\s*["\']([^"\']+)["\']', r.text)
            assert assets, (page, r.text)
            assert all(a.startswith("/") and not a.startswith("//") for a in assets), assets
            assert "cdn" not in r.text.lower() and "fonts.googleapis" not in r.text, r.text
            for asset in assets:
                assert (await http.get(asset)).status_code == 200, asset
        assert (await http.get("/openapi.json")).status_code == 200
