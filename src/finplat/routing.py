"""The route class behind every `/api/v2` endpoint: authenticate, then one unit of work.

Putting both in the route class (rather than in per-endpoint dependencies) means no endpoint can
forget either: authentication runs before the body is parsed or validated, the company is bound
to the session before any query runs, and the transaction commits before the response is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response, Security
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth.principal import Principal, authenticate
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work

API_KEY_HEADER = "x-api-key"

# Declares the security scheme in the OpenAPI document; the check itself is in the route class.
api_key_scheme = APIKeyHeader(
    name=API_KEY_HEADER,
    scheme_name="ApiKey",
    description="The company API key. Keep it server-side; never send it from a client app.",
    auto_error=False,
)


class AuthenticatedRoute(APIRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def authenticated_handler(request: Request) -> Response:
            async with unit_of_work(request.app.state.session_factory) as session:
                principal = await authenticate(session, request.headers.get(API_KEY_HEADER))
                bind_company(session, principal.company_id)
                request.state.session = session
                request.state.principal = principal
                request.state.company_id = principal.company_id
                return await handler(request)

        return authenticated_handler


def api_router(**kwargs: Any) -> APIRouter:
    """A router whose routes all require an API key and run in one unit of work."""
    return APIRouter(
        route_class=AuthenticatedRoute, dependencies=[Security(api_key_scheme)], **kwargs
    )


def _session(request: Request) -> AsyncSession:
    session: AsyncSession = request.state.session
    return session


def _principal(request: Request) -> Principal:
    principal: Principal = request.state.principal
    return principal


DbSession = Annotated[AsyncSession, Depends(_session)]
CurrentPrincipal = Annotated[Principal, Depends(_principal)]
