"""The unit of work's session, the caller and the provider registry, as endpoints declare them.

Endpoints take `DbSession`, `CurrentPrincipal` and `CurrentProviders` parameters. Anywhere,
they are FastAPI dependencies reading the request's state. On the API's own routes
(`http.routing.AuthenticatedRoute`) the route hands them over itself (`handed_over`): FastAPI
resolves each dependency of each request anew (its signature's parameters, a cache key, an
await), about 2.5 % of a read's server CPU for three values the route already holds
(docs/performance.md).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, get_args, get_origin

from fastapi import Depends, Request
from fastapi.params import Depends as DependsParam
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth.principal import Principal
from finplat.providers.registry import Providers


def _session_of(request: Request) -> AsyncSession:
    session: AsyncSession = request.state.session
    return session


def _principal_of(request: Request) -> Principal:
    principal: Principal = request.state.principal
    return principal


def _providers_of(request: Request) -> Providers:
    providers: Providers = request.app.state.providers
    return providers


# The dependencies are `async def` though they await nothing: FastAPI runs a plain `def`
# dependency in a worker thread, a thread hop per dependency on every request.
async def _session(request: Request) -> AsyncSession:
    return _session_of(request)


async def _principal(request: Request) -> Principal:
    return _principal_of(request)


async def _providers(request: Request) -> Providers:
    return _providers_of(request)


DbSession = Annotated[AsyncSession, Depends(_session)]
CurrentPrincipal = Annotated[Principal, Depends(_principal)]
# The provider registry built at startup (tests swap in their own on `app.state`).
CurrentProviders = Annotated[Providers, Depends(_providers)]

# What each dependency reads, for the route to read it itself.
_READERS: dict[Callable[[Request], Coroutine[Any, Any, Any]], Callable[[Request], Any]] = {
    _session: _session_of,
    _principal: _principal_of,
    _providers: _providers_of,
}
# The parameter through which FastAPI passes the request, when the endpoint takes none itself.
_REQUEST = "finplat_request_"


def handed_over(endpoint: Callable[..., Any]) -> Callable[..., Any]:
    """The endpoint as FastAPI should see it: without its session, principal and providers
    parameters (filled from the request's state at the call, read when it is made, as the
    dependencies read them) and with the request as a parameter (FastAPI passes it without
    resolving anything). An endpoint that takes none of the three, or is not a coroutine
    function, is returned as it is."""
    if not inspect.iscoroutinefunction(endpoint):
        return endpoint
    signature = inspect.signature(endpoint, eval_str=True)
    readers = {
        name: reader
        for name, parameter in signature.parameters.items()
        if (reader := _reader_of(parameter)) is not None
    }
    if not readers:
        return endpoint
    kept = [p for name, p in signature.parameters.items() if name not in readers]
    request_name = next((p.name for p in kept if p.annotation is Request), None)
    if request_name is None:
        request_name = _REQUEST
        kept.append(inspect.Parameter(_REQUEST, inspect.Parameter.KEYWORD_ONLY, annotation=Request))
    passed_request = request_name != _REQUEST
    pairs = tuple(readers.items())

    @functools.wraps(endpoint)
    async def with_request_state(**values: Any) -> Any:
        request = values[request_name] if passed_request else values.pop(_REQUEST)
        for name, read in pairs:
            values[name] = read(request)
        return await endpoint(**values)

    with_request_state.__signature__ = signature.replace(parameters=kept)  # type: ignore[attr-defined]
    return with_request_state


def _reader_of(parameter: inspect.Parameter) -> Callable[[Request], Any] | None:
    if get_origin(parameter.annotation) is not Annotated:
        return None
    for marker in get_args(parameter.annotation)[1:]:
        if isinstance(marker, DependsParam) and marker.dependency in _READERS:
            return _READERS[marker.dependency]
    return None
