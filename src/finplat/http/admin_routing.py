"""The route class of the platform administration routes (`/api/v2/admin/*`).

Two kinds of key are admitted there (DESIGN.md, "Operator (platform admin) keys"):

- a platform operator key (`finplat operator create-key`) acts on any company, named by the
  request's `companyId`, and alone may change what is platform-global;
- a company key acts on its own company only: another `companyId` answers 404, exactly as a
  company that does not exist, and a platform-global change answers 403.

A company key takes the ordinary route (`AuthenticatedRoute`), so everything that holds for
it elsewhere (key store, revocation, tenant guard) holds here. An operator key is told apart
by its prefix and authenticated by one short read; its failures count against the address
like any other, and its requests are rate limited per key like a company key's.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response, Security
from fastapi.routing import APIRoute
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import ClientDisconnect

from finplat.auth import operator_keys
from finplat.auth.api_keys import is_operator_key
from finplat.auth.authentication import INVALID_KEY
from finplat.auth.operator_keys import OperatorPrincipal
from finplat.auth.principal import Principal
from finplat.companies import repository as companies
from finplat.db.tenancy import bind_company
from finplat.errors import ApiError, NotFound, Unauthorized, ValidationFailed
from finplat.http.indexed_router import IndexedRouter
from finplat.http.integer_parameters import integer_parameters, refuse_what_is_not_digits
from finplat.http.routing import (
    AuthenticatedRoute,
    ExactJsonRequest,
    address_of,
    api_key_of,
    api_key_scheme,
    read_whole_body,
    serve_in_unit_of_work,
)
from finplat.idempotency import service as idempotency
from finplat.idempotency.http import claim_for
from finplat.idempotency.service import Claim
from finplat.kit.schemas import MAX_ID, PARAMETER_ID


class CompanyNotFound(NotFound):
    code = "COMPANY_NOT_FOUND"
    message = "No company with that id."


class OperatorKeyRequired(ApiError):
    status = 403
    code = "OPERATOR_KEY_REQUIRED"
    message = "Only a platform operator key may change platform-global settings."


class CompanyIdRequired(ValidationFailed):
    code = "COMPANY_ID_REQUIRED"
    message = "An operator key acts on the company named by the companyId query parameter."

    def __init__(self) -> None:
        super().__init__(validation_errors={"companyId": ["Required with an operator key."]})


@dataclass(frozen=True, slots=True)
class AdminCaller:
    """Who calls an admin route: a platform operator, or a company acting on itself."""

    operator: OperatorPrincipal | None
    principal: Principal | None

    @property
    def is_operator(self) -> bool:
        return self.operator is not None

    @property
    def own_company_id(self) -> int | None:
        return self.principal.company_id if self.principal is not None else None

    def require_operator(self) -> None:
        if self.operator is None:
            raise OperatorKeyRequired()

    @property
    def idempotency_scope(self) -> str:
        if self.operator is None:
            return idempotency.REQUEST_SCOPE
        return f"operator:{self.operator.operator_key_id}"


async def target_company(session: AsyncSession, caller: AdminCaller, company_id: int | None) -> int:
    """The company the request acts on: a company key's own (another `companyId` is 404, as a
    company that does not exist); for an operator, `companyId` (required; 404 when unknown),
    to which the session is then bound, so the tenant guard holds for the rest of the
    request as it does for a company key."""
    if caller.principal is not None:
        if company_id is not None and company_id != caller.principal.company_id:
            raise CompanyNotFound()
        return caller.principal.company_id
    if company_id is None:
        raise CompanyIdRequired()
    if await companies.get(session, company_id) is None:
        raise CompanyNotFound()
    bind_company(session, company_id)
    return company_id


async def claim_admin_request(
    request: Request,
    session: AsyncSession,
    caller: AdminCaller,
    *,
    company_id: int,
    key: str | None,
) -> Claim:
    """Claim the `Idempotency-Key` for the company acted on; an operator's keys live in a
    scope of their own, so they never collide with the company's."""
    return await claim_for(
        request, session, company_id=company_id, key=key, scope=caller.idempotency_scope
    )


class AdminRoute(AuthenticatedRoute):
    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        company_handler = super().get_route_handler()
        handler = APIRoute.get_route_handler(self)
        integers = integer_parameters(self.dependant)

        async def admin_handler(request: Request) -> Response:
            api_key, _ = api_key_of(request)
            if api_key is None or not is_operator_key(api_key):
                return await company_handler(request)
            request = ExactJsonRequest(request.scope, request.receive)
            state = request.app.state
            operator = await _authenticate_operator(request, api_key)
            await state.rate_limiter.check(_rate_limit_id(operator))
            refuse_what_is_not_digits(request, integers)
            try:
                await read_whole_body(request)
            except ClientDisconnect:
                return Response(status_code=499)

            async def admit(session: AsyncSession) -> None:
                if not await operator_keys.is_active(session, operator):
                    await state.auth_throttle.count_failure(address_of(request))
                    raise Unauthorized(INVALID_KEY)
                request.state.operator = operator

            return await serve_in_unit_of_work(request, handler, admit)

        return admin_handler


def _rate_limit_id(operator: OperatorPrincipal) -> int:
    # Negative, so an operator key never shares a budget with the company key of that id.
    return -operator.operator_key_id


async def _authenticate_operator(request: Request, api_key: str) -> OperatorPrincipal:
    state = request.app.state
    address = address_of(request)
    refusal = await state.auth_throttle.refusal(address)
    if refusal is not None:
        raise refusal
    async with state.session_factory() as session:
        operator = await operator_keys.find_active(session, api_key)
    if operator is None:
        await state.auth_throttle.count_failure(address)
        raise Unauthorized(INVALID_KEY)
    return operator


def admin_router(**kwargs: Any) -> APIRouter:
    """A router for `/api/v2/admin/*`: operator keys and company keys, each in one unit of
    work."""
    return IndexedRouter(route_class=AdminRoute, dependencies=[Security(api_key_scheme)], **kwargs)


async def _caller(request: Request) -> AdminCaller:
    # Async, as the route's other dependencies: a plain function would run in a thread.
    return AdminCaller(
        operator=getattr(request.state, "operator", None),
        principal=getattr(request.state, "principal", None),
    )


CurrentAdmin = Annotated[AdminCaller, Depends(_caller)]
CompanyIdQuery = Annotated[
    int | None,
    Query(
        alias="companyId",
        ge=1,
        le=MAX_ID,
        description="The company acted on. Required with an operator key; with a company key "
        "it may be omitted, and any other company's id is 404.",
    ),
    PARAMETER_ID,
]
