"""The route class behind every `/api/v2` endpoint: authenticate, then one unit of work.

Putting both in the route class (rather than in per-endpoint dependencies) means no endpoint can
forget either: authentication runs before the body is parsed or validated, the company is bound
to the session before any query runs, and the transaction commits before the response is sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine, Sequence
from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response, Security
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.routing import BaseRoute

from finplat.auth.principal import Principal, authenticate
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError, error_response
from finplat.idempotency import service as idempotency
from finplat.idempotency.http import RequestClaim
from finplat.indexed_router import IndexedRouter
from finplat.integer_parameters import integer_parameters, refuse_what_is_not_digits
from finplat.kit.money import exact_json_numbers
from finplat.providers.registry import Providers
from finplat.rate_limit import RATE_COUNTED, CountedRequest

API_KEY_HEADER = "x-api-key"

# Declares the security scheme in the OpenAPI document; the check itself is in the route class.
api_key_scheme = APIKeyHeader(
    name=API_KEY_HEADER,
    scheme_name="ApiKey",
    description="The company API key. Keep it server-side; never send it from a client app.",
    auto_error=False,
)


class ExactJsonRequest(Request):
    """Parses JSON bodies with decimals kept exact.

    Starlette's `json()` turns 0.10000000000000001 into the float 0.1 before validation, which
    would round a money amount silently; here every JSON number with a fraction or exponent
    becomes a `Decimal` with exactly the digits sent.
    """

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = json.loads(await self.body(), parse_float=Decimal)
        return self._json


class AuthenticatedRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        integers = integer_parameters(self.dependant)

        async def authenticated_handler(request: Request) -> Response:
            request = ExactJsonRequest(request.scope, request.receive)
            factory: async_sessionmaker[AsyncSession] = request.app.state.session_factory
            try:
                async with unit_of_work(factory) as session:
                    principal = await authenticate(session, request.headers.get(API_KEY_HEADER))
                    request.state.company_id = principal.company_id
                    await _count_against_rate_limit(request, principal)
                    bind_company(session, principal.company_id)
                    refuse_what_is_not_digits(request, integers)
                    request.state.session = session
                    request.state.principal = principal
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

        return authenticated_handler


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
            scope=idempotency.REQUEST_SCOPE,
            fingerprint_=held.fingerprint,
            method=held.method,
            path=held.path,
            status=rendered.status_code,
            body=bytes(rendered.body),
            content_type=rendered.media_type or "application/json",
        )
    else:
        await idempotency.release(factory, held.claim)


def api_router(**kwargs: Any) -> APIRouter:
    """A router whose routes all require an API key and run in one unit of work."""
    return IndexedRouter(
        route_class=AuthenticatedRoute, dependencies=[Security(api_key_scheme)], **kwargs
    )


def _session(request: Request) -> AsyncSession:
    session: AsyncSession = request.state.session
    return session


def _principal(request: Request) -> Principal:
    principal: Principal = request.state.principal
    return principal


def _providers(request: Request) -> Providers:
    providers: Providers = request.app.state.providers
    return providers


DbSession = Annotated[AsyncSession, Depends(_session)]
CurrentPrincipal = Annotated[Principal, Depends(_principal)]
# The provider registry built at startup (tests swap in their own on `app.state`).
CurrentProviders = Annotated[Providers, Depends(_providers)]


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
