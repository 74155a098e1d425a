"""Every error leaves in the spec's standard body: typed `ApiError`s as they are, and what
FastAPI and Starlette raise themselves (request validation, unknown routes, wrong methods)
translated to the same shape with the right status."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from finplat.db.busy import database_busy
from finplat.errors import (
    ApiError,
    DatabaseBusy,
    DuplicateField,
    InvalidAmount,
    MalformedJson,
    MethodNotAllowed,
    RouteNotFound,
    UnsupportedMediaType,
    ValidationFailed,
    error_response_for,
)
from finplat.http.routing import served_routes
from finplat.kit.fields import NAMED_FORMATS
from finplat.kit.money import INVALID_AMOUNT_ERROR
from finplat.kit.schemas import DUPLICATE_FIELD_ERROR


class FrameworkHttpError(ApiError):
    """Any other HTTP error the framework raises itself, with its status and detail."""

    code = "HTTP_ERROR"


_REQUEST_PARTS = {"body", "query", "path", "header", "cookie"}


def _field_key(loc: tuple[Any, ...]) -> str:
    parts = list(loc[1:] if loc and loc[0] in _REQUEST_PARTS else loc)
    if not parts:
        return "Body"
    return ".".join(_wire_name(p) if isinstance(p, str) else str(p) for p in parts)


def _wire_name(name: str) -> str:
    """The field as the spec spells it: PascalCase, except its snake_case names
    (`crypto_currency`, `chain_id`), which keep their own spelling."""
    return name if "_" in name else name[:1].upper() + name[1:]


def _message(error: dict[str, Any]) -> str:
    if error.get("type") == "extra_forbidden":
        return "Unknown field."
    if error.get("type") == "missing":
        return "Field required."
    if error.get("type") == "string_pattern_mismatch":
        named = NAMED_FORMATS.get(str((error.get("ctx") or {}).get("pattern")))
        if named is not None:
            return named.message
    message = str(error.get("msg", "Invalid value."))
    return message.removeprefix("Value error, ")


def validation_error(exc: RequestValidationError) -> ApiError:
    errors = list(exc.errors())
    for error in errors:
        if error.get("type") == "json_invalid":
            reason = (error.get("ctx") or {}).get("error")
            return MalformedJson(details=str(reason) if reason else None)
    fields: dict[str, list[str]] = {}
    for error in errors:
        loc = tuple(error.get("loc", ()))
        if error.get("type") == DUPLICATE_FIELD_ERROR:
            # Raised for the object that holds the field: name the field itself.
            for name in (error.get("ctx") or {}).get("fields", ()):
                fields.setdefault(_field_key((*loc, name)), []).append(_message(error))
        else:
            fields.setdefault(_field_key(loc), []).append(_message(error))
    if errors and all(e.get("type") == INVALID_AMOUNT_ERROR for e in errors):
        return InvalidAmount(validation_errors=fields)
    if errors and all(e.get("type") == DUPLICATE_FIELD_ERROR for e in errors):
        return DuplicateField(validation_errors=fields)
    return ValidationFailed(validation_errors=fields)


def _body_sent_as_non_json(request: Request, exc: RequestValidationError) -> bool:
    """A JSON body route got a body it could not read as JSON because of its content type.

    FastAPI then validates the raw bytes, which fails at the body root.
    """
    content_type = request.headers.get("content-type", "").lower()
    if not content_type or "json" in content_type:
        return False
    return any(tuple(e.get("loc", ())) == ("body",) for e in exc.errors())


def _methods_for_path(app: FastAPI, scope: Any) -> list[str]:
    """Every method served at the request's path: Starlette's own 405 names only the first
    route that matched the path, not all of them."""
    methods: set[str] = set()
    for route in served_routes(app.routes):
        match, _ = route.matches({**scope, "method": "GET"})
        if match is not Match.NONE:
            methods |= getattr(route, "methods", None) or set()
    return sorted(methods - {"HEAD"})


def install_error_handlers(app: FastAPI) -> None:
    async def on_api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return error_response_for(exc, request.url.path)

    async def on_validation_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        if _body_sent_as_non_json(request, exc):
            return error_response_for(UnsupportedMediaType(), request.url.path)
        return error_response_for(validation_error(exc), request.url.path)

    async def on_http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        headers = dict(exc.headers) if exc.headers else None
        if exc.status_code == 404:
            return error_response_for(RouteNotFound(headers=headers), request.url.path)
        if exc.status_code == 405:
            allowed = ", ".join(_methods_for_path(app, request.scope))
            return error_response_for(
                MethodNotAllowed(headers={"Allow": allowed}), request.url.path
            )
        return error_response_for(
            FrameworkHttpError(str(exc.detail), status=exc.status_code, headers=headers),
            request.url.path,
        )

    async def on_database_error(request: Request, exc: Exception) -> JSONResponse:
        # Only "busy, try again" is the client's to retry; any other database error stays
        # a fault of ours, answered 500 by the last-resort handler.
        if not database_busy(exc):
            raise exc
        return error_response_for(DatabaseBusy(), request.url.path)

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(sa_exc.TimeoutError, on_database_error)
    app.add_exception_handler(sa_exc.DBAPIError, on_database_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)
