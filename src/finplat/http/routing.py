"""The route class behind every `/api/v2` endpoint: authenticate, read the body, then one unit
of work.

Putting these in the route class (rather than in per-endpoint dependencies) means no endpoint can
forget any: authentication runs before the body is read, parsed or validated; the whole body is
read before the unit of work begins, so no request holds a database connection (or SQLite's
write lock) while a slow client is still sending; the company is bound to the session before
any query runs; and the transaction commits before the response is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from fastapi import APIRouter, Request, Response, Security
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.requests import ClientDisconnect
from starlette.routing import BaseRoute

from finplat.auth import authentication, key_store
from finplat.auth.principal import Principal
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError, error_response
from finplat.http import json_body
from finplat.http.indexed_router import IndexedRouter
from finplat.http.integer_parameters import integer_parameters, refuse_what_is_not_digits
from finplat.http.rate_limit import RATE_COUNTED, CountedRequest
from finplat.http.request_state import CurrentPrincipal as CurrentPrincipal
from finplat.http.request_state import CurrentProviders as CurrentProviders
from finplat.http.request_state import DbSession as DbSession
from finplat.http.request_state import handed_over
from finplat.idempotency import service as idempotency
from finplat.idempotency.http import RequestClaim
from finplat.kit.money import exact_json_numbers

API_KEY_HEADER = "x-api-key"

# Declares the security scheme in the OpenAPI document; the check itself is in the route class.
api_key_scheme = APIKeyHeader(
    name=API_KEY_HEADER,
    scheme_name="ApiKey",
    description="The company API key. Keep it server-side; never send it from a client app.",
    auto_error=False,
)


class ExactJsonRequest(Request):
    """Parses JSON bodies with `finplat.http.json_body`: decimals kept exact, UTF-8 only, and no key
    given twice.

    Starlette's `json()` turns 0.10000000000000001 into the float 0.1 before validation, which
    would round a money amount silently; here every JSON number with a fraction or exponent
    becomes a `Decimal` with exactly the digits sent.
    """

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = json_body.parse(await self.body())
        return self._json


class AuthenticatedRoute(APIRoute):
    def __init__(self, path: str, endpoint: Callable[..., Any], **kwargs: Any) -> None:
        super().__init__(path, handed_over(endpoint), **kwargs)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        integers = integer_parameters(self.dependant)

        async def authenticated_handler(request: Request) -> Response:
            request = ExactJsonRequest(request.scope, request.receive)
            state = request.app.state
            api_key, unusable = api_key_of(request)
            principal = await authentication.authenticate(
                store=state.api_keys,
                throttle=state.auth_throttle,
                factory=state.session_factory,
                api_key=api_key,
                address=address_of(request),
                missing=unusable,
            )
            request.state.company_id = principal.company_id
            await _count_against_rate_limit(request, principal)
            refuse_what_is_not_digits(request, integers)
            try:
                await read_whole_body(request)
            except ClientDisconnect:
                # Gone, or answered already by `RequestBodyGuard` (408, 413): nothing to send.
                return Response(status_code=499)

            async def admit(session: AsyncSession) -> None:
                if api_key and not await key_store.still_active(session, principal):
                    raise await authentication.revoked(
                        store=state.api_keys,
                        throttle=state.auth_throttle,
                        api_key=api_key,
                        address=address_of(request),
                    )
                bind_company(session, principal.company_id)
                request.state.principal = principal

            return await serve_in_unit_of_work(request, handler, admit)

        return authenticated_handler


async def serve_in_unit_of_work(
    request: Request,
    handler: Callable[[Request], Coroutine[Any, Any, Response]],
    admit: Callable[[AsyncSession], Coroutine[Any, Any, None]],
) -> Response:
    """Run the endpoint in one unit of work, once `admit` has checked the caller's key is still
    active and bound the caller to the session; store a claimed key's answer with the
    operation's last effect, or settle the claim after an error."""
    factory: async_sessionmaker[AsyncSession] = request.app.state.session_factory
    try:
        async with unit_of_work(factory) as session:
            await admit(session)
            request.state.session = session
            response = _with_exact_numbers(await handler(request))
            held = _held_claim(request)
            if held is not None:
                # Same transaction as the operation's last effect.
                await idempotency.complete(
                    session,
                    held.claim,
                    status=response.status_code,
                    body=bytes(response.body),
                    content_type=response.media_type or "application/json",
                )
            return response
    except idempotency.StoredResponse as stored:
        return Response(
            stored.body,
            status_code=stored.status,
            media_type=stored.content_type,
            headers={"Idempotent-Replayed": "true"},
        )
    except ApiError as error:
        await _settle_claim_after_error(request, factory, error)
        raise
    except Exception:
        await _settle_claim_after_error(request, factory, None)
        raise


def api_key_of(request: Request) -> tuple[str | None, str]:
    """The `x-api-key` header's value, or None with why it is unusable: missing, empty, or
    sent more than once (two keys are ambiguous: which company is calling?)."""
    values = request.headers.getlist(API_KEY_HEADER)
    if len(values) > 1:
        return None, "Send one x-api-key header, not several."
    key = values[0].strip() if values else ""
    return (key or None), authentication.MISSING_KEY


def address_of(request: Request) -> str:
    return request.client.host if request.client else ""


async def read_whole_body(request: Request) -> None:
    """Read the body (cached on the request for the handler), and parse it now when it is
    JSON, so malformed or ambiguous JSON is refused before any transaction."""
    body = await request.body()
    if body and _is_json(request.headers.get("content-type")):
        await request.json()


def _is_json(content_type: str | None) -> bool:
    """As FastAPI decides whether to parse a body as JSON."""
    if not content_type:
        return False
    media_type = content_type.split(";", 1)[0].strip().lower()
    maintype, _, subtype = media_type.partition("/")
    return maintype == "application" and (subtype == "json" or subtype.endswith("+json"))


async def _count_against_rate_limit(request: Request, principal: Principal) -> None:
    """Count the request against its API key's limit (429 when spent), unless an edge has
    counted it already: then its verdict stands."""
    counted: CountedRequest | None = getattr(request.state, RATE_COUNTED, None)
    if counted is None or counted.api_key_id != principal.api_key_id:
        await request.app.state.rate_limiter.check(principal.api_key_id)
    elif counted.limited is not None:
        raise counted.limited


def _with_exact_numbers(response: Response) -> Response:
    """Write amounts as exact JSON numbers (see `finplat.kit.money.amount_for_json`)."""
    body = bytes(response.body)
    exact = exact_json_numbers(body)
    if exact == body:
        return response
    headers = {k: v for k, v in response.headers.items() if k.lower() != "content-length"}
    return Response(exact, status_code=response.status_code, headers=headers)


def _held_claim(request: Request) -> RequestClaim | None:
    held: RequestClaim | None = getattr(request.state, "idempotency", None)
    return held


def _is_final(error: ApiError) -> bool:
    """Business errors are the operation's answer; technical ones (5xx) and a busy key are
    not, so a retry may still succeed."""
    return error.status < 500 and error.code != idempotency.IdempotencyKeyInUse.code


async def _settle_claim_after_error(
    request: Request, factory: async_sessionmaker[AsyncSession], error: ApiError | None
) -> None:
    held = _held_claim(request)
    if held is None:
        return
    if error is not None and _is_final(error):
        rendered = error_response(error)
        await idempotency.store_failure(
            factory,
            held.claim,
            scope=held.scope,
            fingerprint_=held.fingerprint,
            method=held.method,
            path=held.path,
            status=rendered.status_code,
            body=bytes(rendered.body),
            content_type=rendered.media_type or "application/json",
        )
    else:
        await idempotency.release(factory, held.claim)


def api_router(*, dependencies: Sequence[Any] = (), **kwargs: Any) -> APIRouter:
    """A router whose routes all require an API key and run in one unit of work; `dependencies`
    run after the key is checked and the session bound, before the body is validated."""
    return IndexedRouter(
        route_class=AuthenticatedRoute,
        dependencies=[Security(api_key_scheme), *dependencies],
        **kwargs,
    )


def served_routes(routes: Sequence[BaseRoute]) -> list[BaseRoute]:
    """Every route the application really serves, flattened.

    Recent FastAPI keeps included routers as wrapper objects in `app.routes` instead of copying
    their routes in, so code that walks `app.routes` would miss every API route. Our routers
    are included without a prefix, so the inner routes' paths are the served paths.
    """
    flat: list[BaseRoute] = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            flat += served_routes(inner.routes)
        else:
            flat.append(route)
    return flat
