"""The application factory: routers, middleware, error handlers and the OpenAPI document."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from finplat import __version__, callback_handlers, docs_page, health
from finplat.auth.failure_throttle import FailedAuthThrottle
from finplat.auth.key_store import ApiKeyStore
from finplat.banking.endpoints import router as banking_router
from finplat.banking.fx.endpoints import router as fx_router
from finplat.banking.payees.endpoints import router as payees_router
from finplat.banking.payouts.endpoints import router as payouts_router
from finplat.banking.payouts.sandbox_endpoints import router as sandbox_payouts_router
from finplat.banking.transfers.endpoints import router as transfers_router
from finplat.bankprov_onboarding.endpoints import router as bankprov_onboarding_router
from finplat.business.endpoints import router as business_router
from finplat.cards.deposit_endpoints import router as card_deposit_router
from finplat.cards.endpoints import router as cards_router
from finplat.cards.funding_endpoints import router as card_funding_router
from finplat.cards.physical_endpoints import router as physical_cards_router
from finplat.cards.sandbox_endpoints import router as sandbox_cards_router
from finplat.cards.simulation_endpoints import router as card_simulation_router
from finplat.cards.topup_batches import TopupBatches
from finplat.cards.topup_lane import TopupLane
from finplat.cards.widget_page import router as card_widget_router
from finplat.companies.endpoints import router as company_router
from finplat.config import Settings, get_settings
from finplat.db.engine import create_engine, create_session_factory
from finplat.errors import (
    ApiError,
    ErrorBody,
    InvalidAmount,
    MalformedJson,
    MethodNotAllowed,
    RouteNotFound,
    UnsupportedMediaType,
    ValidationFailed,
    error_response,
)
from finplat.events.endpoints import router as events_router
from finplat.jobs import run_background
from finplat.kit.fields import NAMED_FORMATS
from finplat.kit.money import INVALID_AMOUNT_ERROR
from finplat.kyc.endpoints import router as kyc_router
from finplat.observability import RequestContextMiddleware, configure_logging
from finplat.providers.callback_endpoints import router as provider_callbacks_router
from finplat.providers.registry import build_providers
from finplat.provisioning.endpoints import router as provisioning_router
from finplat.rate_limit import ApiKeyRateLimiter
from finplat.request_body import RequestBodyGuard
from finplat.routing import served_routes
from finplat.sandbox.banking_endpoints import router as sandbox_banking_router
from finplat.sandbox.endpoints import router as sandbox_router
from finplat.sandbox.hosted_kyc import router as hosted_kyc_router
from finplat.tiers.endpoints import router as tiers_router
from finplat.transactions.endpoints import router as transactions_router
from finplat.users.endpoints import router as users_router

API_DESCRIPTION = """\
finplat: users, KYC, cards, banking and signed webhooks for partner companies, behind one API.

Every `/api/v2` route needs the company API key in exactly one `x-api-key` header (two are
401). Property names are PascalCase. Every error has the same body: `Message`, `Code`,
`Status`, `ValidationErrors` (field-level, keyed by PascalCase field name) and `Details`.
Integers in paths and query strings are written with the digits 0-9 only (`6`, not `6.0`, `+6`
or ` 6`): anything else is 400 `VALIDATION_ERROR`.

Request bodies are UTF-8 JSON; a key given twice in one object is 400 `DUPLICATE_FIELD`, and a
body that is not UTF-8 JSON (or uses `NaN`/`Infinity`) is 400 `MALFORMED_JSON`. A body must
arrive whole within a few seconds of its headers (file uploads: longer, in proportion to their
size), or the request is answered 408 `REQUEST_TIMEOUT`. Requests without a valid API key are
counted per client address: past the limit (20 a minute by default) they are answered 429
`AUTHENTICATION_THROTTLED` with `Retry-After`.
"""

_REQUEST_PARTS = {"body", "query", "path", "header", "cookie"}


YOUNG_GENERATION_THRESHOLD = 20_000


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    configure_logging(settings)
    engine = create_engine(settings)
    session_factory = create_session_factory(engine)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Everything built so far (modules, routes, models) lives as long as the process: out
        # of the collector's reach, a full collection scans only what requests leave behind
        # instead of pausing every request for the whole heap (about 150 ms here). A request's
        # objects die by reference counting; collecting the young generation every 700
        # allocations only rescans the objects of the requests in flight (2,000 collections
        # in a 40 s benchmark against 23 at this threshold; docs/performance.md).
        gc.freeze()
        gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *gc.get_threshold()[1:])
        stop = asyncio.Event()
        background = (
            asyncio.create_task(run_background(settings, session_factory, stop))
            if settings.run_background_jobs
            else None
        )
        try:
            yield
        finally:
            stop.set()
            if background is not None:
                await background
            await engine.dispose()

    app = FastAPI(
        title="finplat API",
        version=__version__,
        description=API_DESCRIPTION,
        lifespan=lifespan,
        generate_unique_id_function=lambda route: route.name,
        # Served offline by `finplat.docs_page` instead of from a CDN.
        docs_url=None,
        redoc_url=None,
        # No OpenTelemetry here: the request id and the structured access log are the trace.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = session_factory
    app.state.providers = build_providers(settings, session_factory)
    app.state.rate_limiter = ApiKeyRateLimiter(settings.rate_limit, redis_url=settings.redis_url)
    app.state.auth_throttle = FailedAuthThrottle(
        settings.auth_failure_limit, redis_url=settings.redis_url
    )
    app.state.api_keys = ApiKeyStore(settings.api_key_cache_size)

    app.include_router(health.router)
    docs_page.install(app)
    app.include_router(users_router)
    app.include_router(tiers_router)
    app.include_router(company_router)
    app.include_router(events_router)
    app.include_router(kyc_router)
    app.include_router(provisioning_router)
    app.include_router(provider_callbacks_router)
    app.include_router(bankprov_onboarding_router)
    app.include_router(business_router)
    app.include_router(banking_router)
    app.include_router(payees_router)
    app.include_router(fx_router)
    app.include_router(payouts_router)
    app.include_router(transfers_router)
    app.include_router(transactions_router)
    app.include_router(card_funding_router)
    app.include_router(physical_cards_router)
    app.include_router(cards_router)
    callback_handlers.load()
    if settings.sandbox:
        app.include_router(sandbox_router)
        app.include_router(hosted_kyc_router)
        app.include_router(sandbox_banking_router)
        app.include_router(sandbox_payouts_router)
        app.include_router(card_simulation_router)
        app.include_router(card_deposit_router)
        app.include_router(sandbox_cards_router)
        app.include_router(card_widget_router)

    _install_error_handlers(app)
    app.state.topup_batches = None
    if settings.topup_batch_runners and not settings.is_sqlite:
        app.state.topup_batches = TopupBatches(
            app.state,
            batch_size=settings.topup_batch_size,
            runners=settings.topup_batch_runners,
            linger_seconds=settings.topup_batch_linger_ms / 1000,
        )
    # Added last = outermost: the request id and access log wrap everything, the body's size
    # and time limits apply before routing; batched top-ups are served inside both.
    app.add_middleware(TopupLane)
    app.add_middleware(
        RequestBodyGuard,
        max_bytes=settings.max_body_bytes,
        max_upload_bytes=settings.max_upload_bytes,
        body_timeout=settings.body_timeout_seconds,
        upload_timeout=settings.upload_timeout_seconds,
        upload_rate=settings.upload_min_bytes_per_second,
    )
    app.add_middleware(RequestContextMiddleware)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _field_key(loc: tuple[Any, ...]) -> str:
    parts = list(loc[1:] if loc and loc[0] in _REQUEST_PARTS else loc)
    if not parts:
        return "Body"
    return ".".join(p[:1].upper() + p[1:] if isinstance(p, str) else str(p) for p in parts)


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
        fields.setdefault(_field_key(tuple(error.get("loc", ()))), []).append(_message(error))
    if errors and all(e.get("type") == INVALID_AMOUNT_ERROR for e in errors):
        return InvalidAmount(validation_errors=fields)
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


def _install_error_handlers(app: FastAPI) -> None:
    async def on_api_error(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return error_response(exc)

    async def on_validation_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        if _body_sent_as_non_json(request, exc):
            return error_response(UnsupportedMediaType())
        return error_response(validation_error(exc))

    async def on_http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        headers = dict(exc.headers) if exc.headers else None
        if exc.status_code == 404:
            return error_response(RouteNotFound(headers=headers))
        if exc.status_code == 405:
            allowed = ", ".join(_methods_for_path(app, request.scope))
            return error_response(MethodNotAllowed(headers={"Allow": allowed}))
        return error_response(
            ApiError(str(exc.detail), status=exc.status_code, code="HTTP_ERROR", headers=headers)
        )

    app.add_exception_handler(ApiError, on_api_error)
    app.add_exception_handler(RequestValidationError, on_validation_error)
    app.add_exception_handler(StarletteHTTPException, on_http_error)


# How operations chain (OpenAPI links): what a response returns and which operations take it.
# They document the flows for readers and drive schemathesis' stateful phase.
_LINKS: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {
    ("/api/v2/users", "post", "201"): {
        "GetUser": {"operationId": "get_user", "parameters": {"userId": "$response.body#/Id"}},
        "SelectTier": {
            "operationId": "select_tier",
            "parameters": {"userId": "$response.body#/Id"},
        },
        "FindByExternalUserId": {
            "operationId": "list_users",
            "parameters": {"externalUserId": "$response.body#/ExternalUserId"},
        },
    },
    ("/api/v2/webhooks/test", "post", "202"): {
        "GetEvent": {
            "operationId": "get_event",
            "parameters": {"eventId": "$response.body#/EventId"},
        },
        "ListDeliveries": {
            "operationId": "list_deliveries",
            "parameters": {"eventId": "$response.body#/EventId"},
        },
        "RetryDelivery": {
            "operationId": "retry_delivery",
            "parameters": {"deliveryId": "$response.body#/DeliveryIds/0"},
        },
    },
    ("/api/v2/sandbox/company/funding", "post", "200"): {
        "Balances": {"operationId": "company_balances"},
    },
}


def _add_links(schema: dict[str, Any]) -> None:
    paths = schema.get("paths", {})
    for (path, method, status), links in _LINKS.items():
        operation = paths.get(path, {}).get(method)
        if operation is not None and status in operation.get("responses", {}):
            operation["responses"][status]["links"] = links


def _name_long_patterns(node: Any) -> None:
    """Replace each long pattern by its named format and sentence (`NAMED_FORMATS`), wherever
    the document carries it: a reader gets words, the fuzzer a strategy per format."""
    if isinstance(node, dict):
        pattern = node.get("pattern")
        named = NAMED_FORMATS.get(pattern) if isinstance(pattern, str) else None
        if named is not None:
            del node["pattern"]
            node["format"] = named.name
            description = node.get("description") or ""
            if named.description not in description:
                node["description"] = f"{description} {named.description}".strip()
        for value in node.values():
            _name_long_patterns(value)
    elif isinstance(node, list):
        for value in node:
            _name_long_patterns(value)


def _openapi(app: FastAPI) -> dict[str, Any]:
    """The generated document, corrected to what the service really answers.

    Request validation fails with 400 and the standard error body, never FastAPI's 422 shape.
    """
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}

    def error(description: str) -> dict[str, Any]:
        return {"description": description, "content": {"application/json": {"schema": error_ref}}}

    for path, path_item in schema.get("paths", {}).items():
        for operation in path_item.values():
            responses = operation.setdefault("responses", {})
            if responses.pop("422", None) is not None and "400" not in responses:
                responses["400"] = error("Invalid request.")
            if path.startswith("/api/v2"):
                responses.setdefault(
                    "429",
                    error(
                        "Rate limit for this API key exceeded (`RATE_LIMITED`), or too many "
                        "requests without a valid key from this address "
                        "(`AUTHENTICATION_THROTTLED`)."
                    ),
                )
                responses["429"]["headers"] = {
                    "Retry-After": {
                        "description": "Seconds to wait before retrying.",
                        "schema": {"type": "integer"},
                    }
                }
            if "requestBody" in operation:
                responses.setdefault("408", error("The request body did not arrive in time."))
                responses.setdefault("413", error("Request body too large."))
                responses.setdefault("415", error("Request body is not JSON."))
    _add_links(schema)
    _name_long_patterns(schema)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    components.setdefault("ErrorBody", ErrorBody.model_json_schema())
    app.openapi_schema = schema
    return schema
