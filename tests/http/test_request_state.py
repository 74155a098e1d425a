"""The API's routes hand endpoints their session, caller and providers from the request's state
(`finplat.http.request_state`), without FastAPI resolving a dependency for each."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.routing import APIRoute
from sqlalchemy import text

from finplat.http.request_state import _principal, _providers, _session
from finplat.http.routing import (
    CurrentPrincipal,
    CurrentProviders,
    DbSession,
    api_router,
    served_routes,
)
from finplat.providers.registry import Providers
from tests.conftest import Tenant

HANDED_OVER = {_session, _principal, _providers}


def _route(app: FastAPI, path: str) -> APIRoute:
    return next(r for r in served_routes(app.routes) if isinstance(r, APIRoute) and r.path == path)


def _resolved_calls(route: APIRoute) -> set[Any]:
    calls = set()
    pending = list(route.dependant.dependencies)
    while pending:
        each = pending.pop()
        calls.add(each.call)
        pending += each.dependencies
    return calls


async def test_an_endpoint_gets_the_unit_of_works_session_the_caller_and_the_providers(
    app: FastAPI, tenant: Tenant
) -> None:
    router = api_router()

    @router.get("/test/state")
    async def state(
        session: DbSession, principal: CurrentPrincipal, providers: CurrentProviders
    ) -> dict[str, Any]:
        one = (await session.execute(text("SELECT 1"))).scalar_one()
        return {
            "one": one,
            "company": principal.company_id,
            "providers": providers is app.state.providers,
        }

    app.include_router(router)
    response = await tenant.client.get("/test/state")
    assert response.status_code == 200, response.text
    assert response.json() == {"one": 1, "company": tenant.company_id, "providers": True}
    assert not _resolved_calls(_route(app, "/test/state")) & HANDED_OVER


async def test_an_endpoint_that_takes_the_request_itself_still_gets_it(
    app: FastAPI, api: httpx.AsyncClient
) -> None:
    router = api_router()

    @router.get("/test/state-and-request")
    async def with_request(request: Request, session: DbSession) -> dict[str, Any]:
        return {"same": request.state.session is session, "path": request.url.path}

    app.include_router(router)
    response = await api.get("/test/state-and-request")
    assert response.status_code == 200, response.text
    assert response.json() == {"same": True, "path": "/test/state-and-request"}


async def test_the_providers_are_read_at_the_call_so_a_swapped_registry_is_used(
    app: FastAPI, api: httpx.AsyncClient
) -> None:
    router = api_router()

    @router.get("/test/providers")
    async def providers_of(providers: CurrentProviders) -> dict[str, bool]:
        # A yes or no, not the object's id: a number that long can pass for a card number.
        return {"swapped": providers is swapped}

    app.include_router(router)
    swapped = Providers.__new__(Providers)
    app.state.providers, original = swapped, app.state.providers
    try:
        response = await api.get("/test/providers")
    finally:
        app.state.providers = original
    assert response.json() == {"swapped": True}


async def test_the_handed_over_parameters_are_not_in_the_openapi_document(
    app: FastAPI, api: httpx.AsyncClient
) -> None:
    router = api_router()

    @router.get("/test/documented/{thing_id}")
    async def documented(
        thing_id: int, session: DbSession, principal: CurrentPrincipal
    ) -> dict[str, int]:
        return {"id": thing_id}

    app.include_router(router)
    app.openapi_schema = None
    operation = app.openapi()["paths"]["/test/documented/{thing_id}"]["get"]
    assert [p["name"] for p in operation["parameters"]] == ["thing_id"]
    assert operation["security"] == [{"ApiKey": []}]
    assert (await api.get("/test/documented/7")).json() == {"id": 7}
