"""The hand verifier page (docs/fairness.md): static HTML and a script that checks a record
in the reader's browser with WebCrypto, so the check does not rest on this server."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

HERE = Path(__file__).resolve().parent.parent / "verifier"
router = APIRouter(tags=["fairness"])
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; style-src 'self' 'unsafe-inline'",
    "X-Frame-Options": "DENY",
}


@router.get("/verify", include_in_schema=False)
async def verify_page() -> FileResponse:
    return FileResponse(HERE / "verify.html", media_type="text/html", headers=HEADERS)


@router.get("/verify/verify.js", include_in_schema=False)
async def verify_script() -> FileResponse:
    return FileResponse(HERE / "verify.js", media_type="text/javascript", headers=HEADERS)
