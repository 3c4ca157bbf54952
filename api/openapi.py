"""The OpenAPI document names every error a route can answer, with the body it really has.

Every refusal is ``{code, message, field?}`` (``ErrorBody``, api/errors.py). FastAPI documents
only its own 422 shape (``HTTPValidationError``, which this API never sends); this replaces
it and adds, per operation, the statuses that follow from what the route is:

- every route: 429 (rate limits, api/ratelimit.py) and 503 (Temporal, PostgreSQL or the chain
  unreachable, a workflow that cannot be read);
- a route with parameters or a body: 422 (``validation_error``); with a body, 413 as well;
- a route behind a credential (a security scheme, api/auth.py: a player's token or agent key,
  the admin or internal key): 401, and 403 (a credential that may not do this: an agent where
  only its owner may, a wallet not bound to the caller);
- a route with a path id: 404 (``not_found``: no such tournament, room, agent or hand);
- a route that changes something (not GET): 409 (the state refuses it: full, already
  registered, not your turn, …; api/errors.py ``STATUS`` lists every code).

A route whose errors do not follow from its shape names them itself, in
``openapi_extra={ERRORS: [...]}`` (429 and 503 are added): the internal routes, whose 404 comes
from ids in the body, and the codec, which reads its raw body and its key itself.

tests/api/test_auth_matrix.py checks that every error status a route answered in its matrix
is documented here; schemathesis checks each documented error body against ``ErrorBody``.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute, iter_route_contexts
from pydantic import BaseModel

from api.auth import optional_player
from api.errors import ErrorBody
from domain.settings import TournamentSettings
from wire.events import MTT_EVENTS, ROOM_EVENTS, TOURNAMENT_EVENTS

ERRORS = "x-error-statuses"
"""An operation's own list of error statuses, where they do not follow from its shape."""
DESCRIPTIONS = {
    400: "the request names something of the wrong kind (`not_a_tournament`)",
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
    if ERRORS in operation:
        return statuses | set(operation.pop(ERRORS))
    if parameters:
        statuses.add(422)
    if "requestBody" in operation:
        statuses |= {413, 422}
    if operation.get("security"):
        statuses |= {401, 403}
    if "path" in where:
        statuses.add(404)
    if method.lower() not in ("get", "head"):
        statuses.add(409)
    return statuses


REF = "#/components/schemas/{model}"
SETTINGS_AT = ("CreateTournamentBody", "TournamentView", "TournamentDetail")
"""The schemas whose ``settings`` is a tournament's settings: the body keeps it a plain object
so that the domain's own validation answers with its codes and fields (``invalid_settings``,
``field``), and the document names the shape."""


def add_model(
    schemas: dict[str, Any],
    model: type[BaseModel],
    mode: Literal["validation", "serialization"] = "validation",
) -> dict[str, str]:
    """Put ``model`` (and the models it uses) in the components; a reference to it.

    ``mode="serialization"`` for what is only served (the events): its schema names each field
    as the server writes it. A name already in the components with another shape is refused:
    one of the two would silently replace the other (an event's ``Placing`` once replaced the
    served one, and the document said ``hand_number`` where the server sends ``handNumber``).
    """
    schema = model.model_json_schema(ref_template=REF, mode=mode)
    for name, shape in {**schema.pop("$defs", {}), model.__name__: schema}.items():
        if _shape(schemas.setdefault(name, shape)) != _shape(shape):
            raise ValueError(f"two schemas named {name!r} in the OpenAPI document")
    return {"$ref": REF.format(model=model.__name__)}


def _shape(schema: Any) -> Any:
    """A schema without what only annotates it (titles, defaults: FastAPI leaves the defaults
    out of what it serves, pydantic writes them)."""
    if isinstance(schema, dict):
        return {
            k: {n: _shape(p) for n, p in v.items()} if k == "properties" else _shape(v)
            for k, v in schema.items()
            if k not in ("title", "default")
        }
    if isinstance(schema, list):
        return [_shape(v) for v in schema]
    return schema


def type_the_plain_objects(schemas: dict[str, Any]) -> None:
    """The objects a route keeps plain (they are validated, or were stored, elsewhere) get
    their real shape: the tournament settings and each event's ``data``."""
    settings = add_model(schemas, TournamentSettings)
    for name in SETTINGS_AT:
        schemas[name]["properties"]["settings"] = {**settings, "title": "Settings"}
    served = (*TOURNAMENT_EVENTS, *MTT_EVENTS, *ROOM_EVENTS)
    events = [add_model(schemas, model, "serialization") for model in served]
    schemas["EventOut"]["properties"]["data"] = {
        "anyOf": events,
        "title": "Data",
        "description": "The event's body: the model of its ``type`` (wire/events.py).",
    }


def optional_credentials(app: FastAPI) -> set[tuple[str, str]]:
    """(path, method) of the routes whose credential may be left out (``optional_player``: an
    observer reads without one). Their security lists ``{}`` too, OpenAPI's "or none"."""

    def takes(dependant: Dependant) -> bool:
        return any(d.call is optional_player or takes(d) for d in dependant.dependencies)

    return {
        (str(route.path_format), method.lower())
        for route in iter_route_contexts(app.routes)
        if isinstance(route.original_route, APIRoute) and takes(route.original_route.dependant)
        for method in route.methods or ()
    }


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
        schemas["ErrorBody"] = ErrorBody.model_json_schema(ref_template=REF)
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        type_the_plain_objects(schemas)
        error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        anonymous_too = optional_credentials(app)
        for path, operations in doc["paths"].items():
            for method, operation in operations.items():
                if (path, method) in anonymous_too:
                    operation["security"] = [*operation.get("security", []), {}]
                responses = operation.setdefault("responses", {})
                for status in sorted(error_statuses(method, operation)):
                    responses[str(status)] = {"description": DESCRIPTIONS[status], "content": error}
        app.openapi_schema = doc
        return doc

    app.openapi = openapi  # type: ignore[method-assign]
