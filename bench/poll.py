"""``sng bench``'s game-state pollers, in a process of their own (``python -m bench.poll``).

The pollers stand for agents on other machines: measured from inside the bench's own process,
with httpx, the client was the bottleneck (one core of two spent on building requests while
the bench's bots and bookkeeping shared its event loop), so the figure said more about the
client than about the API. Here each poller is one keep-alive connection of aiohttp, looping
``GET <path>?timeout=0`` for the given seconds.

Input on stdin, JSON: ``{"url": ..., "path": ..., "tokens": [...], "seconds": ...}`` (one
poller per token). Output on stdout, JSON: ``{"elapsed": s, "latencies": [s, ...],
"statuses": {code: n}}`` with the latency of every 200 answer.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import aiohttp


async def poll(url: str, path: str, tokens: list[str], seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    connector = aiohttp.TCPConnector(limit=len(tokens), limit_per_host=len(tokens))
    timeout = aiohttp.ClientTimeout(total=30)
    async with aiohttp.ClientSession(url, connector=connector, timeout=timeout) as http:
        until = time.monotonic() + seconds

        async def one(token: str) -> None:
            headers = {"Authorization": f"Bearer {token}"}
            while time.monotonic() < until:
                started = time.perf_counter()
                async with http.get(path, headers=headers, params={"timeout": "0"}) as r:
                    await r.read()
                statuses[r.status] = statuses.get(r.status, 0) + 1
                if r.status == 200:
                    latencies.append(time.perf_counter() - started)

        began = time.monotonic()
        await asyncio.gather(*(one(t) for t in tokens))
        elapsed = time.monotonic() - began
    return {"elapsed": elapsed, "latencies": latencies, "statuses": statuses}


def main() -> None:
    job = json.loads(sys.stdin.read())
    result = asyncio.run(poll(job["url"], job["path"], job["tokens"], float(job["seconds"])))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
