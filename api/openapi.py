"""The OpenAPI document names every error a route can answer, with the body it really has.

Every refusal is ``{code, message, field?}`` (``ErrorBody``, api/errors.py). FastAPI documents
only its own 422 shape (``HTTPValidationError``, which this API never sends); this replaces
it and adds, per operation, the statuses that follow from what the route is:

- every route: 429 (rate limits, api/ratelimit.py) and 503 (Temporal, PostgreSQL or the chain
  unreachable, a workflow that cannot be read);
- a route with parameters or a body: 422 (``validation_error``); with a body, 413 as well;
- a route behind a credential (a player's token or agent key, the admin or internal key):
  401, and 403 (a credential that may not do this: an agent where only its owner may, a
  wallet not bound to the caller);
- a route with a path id: 404 (``not_found``: no such tournament, room, agent or hand);
- a route that changes something (not GET): 409 (the state refuses it: full, already
  registered, not your turn, …; api/errors.py ``STATUS`` lists every code).

tests/api/test_auth_matrix.py checks that every error status a route answered in its matrix
is documented here; schemathesis checks each documented error body against ``ErrorBody``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from api.errors import ErrorBody

CREDENTIAL_HEADERS = {"authorization", "x-agent-key", "x-service-key", "x-internal-key"}
"""The headers a route reads a credential from (api/auth.py): a player's bearer token, an
agent key, the admin and internal keys."""
DESCRIPTIONS = {
    401: "no valid credential for this route (`unauthorized`)",
    403: "this credential may not do this (`forbidden`, `wallet_not_bound`)",
    404: "no such resource (`not_found`, `table_not_found`, `agent_not_found`)",
    409: "the current state refuses it (the code says why)",
    413: "the body is too large (`payload_too_large`)",
    422: "a parameter or the body is invalid (`validation_error`, with `field`)",
    429: "too many requests (`rate_limited`, with `Retry-After`)",
    503: "a dependency is unavailable; retry (`temporarily_unavailable`, `workflow_unreadable`)",
}


def error_statuses(method: str, operation: dict[str, Any]) -> set[int]:
    """The error statuses an operation can answer, from what it is (the module docstring)."""
    parameters = operation.get("parameters", [])
    where = {p["in"] for p in parameters}
    statuses = {429, 503}
    if parameters:
        statuses.add(422)
    if "requestBody" in operation:
        statuses |= {413, 422}
    if any(p["in"] == "header" and p["name"].lower() in CREDENTIAL_HEADERS for p in parameters):
        statuses |= {401, 403}
    if "path" in where:
        statuses.add(404)
    if method.lower() not in ("get", "head"):
        statuses.add(409)
    return statuses


def install(app: FastAPI) -> None:
    """Build the document once, with the error responses added to every operation."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        doc = get_openapi(
            title=app.title,
            version=app.version,
            description=app.description,
            routes=app.routes,
        )
        schemas = doc.setdefault("components", {}).setdefault("schemas", {})
        schemas["ErrorBody"] = ErrorBody.model_json_schema(
            ref_template="#/components/schemas/{model}"
        )
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        for operations in doc["paths"].values():
            for method, operation in operations.items():
                responses = operation.setdefault("responses", {})
                for status in sorted(error_statuses(method, operation)):
                    responses[str(status)] = {"description": DESCRIPTIONS[status], "content": error}
        app.openapi_schema = doc
        return doc

    app.openapi = openapi  # type: ignore[method-assign]
