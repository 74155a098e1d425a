"""Authentication rule 5: every public MOR endpoint requires that the key's company is enabled
for MOR, whatever the company's type.

The check is a dependency of the router every MOR endpoint module builds with `mor_router`, so
no MOR route can forget it; it runs once the key is checked and the session bound, before the
body is validated, so a company not enabled learns nothing about the route's rules.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth.principal import Principal
from finplat.companies import repository as companies
from finplat.errors import ApiError, error_responses
from finplat.http.routing import api_router

PREFIX = "/api/v2/mor/public"


class MorNotEnabled(ApiError):
    status = 403
    code = "MOR_NOT_ENABLED"
    message = (
        "This company is not enabled for Merchant of Record; the platform operator enables it "
        "(finplat company set-mor)."
    )


async def require_mor_company(request: Request) -> None:
    """Refuse (403 `MOR_NOT_ENABLED`) a caller whose company is not enabled for MOR, read on
    every request so that disabling takes effect at once."""
    session: AsyncSession = request.state.session
    principal: Principal = request.state.principal
    company = await companies.get(session, principal.company_id)
    if company is None or not company.is_mor:
        raise MorNotEnabled()


def mor_router(**kwargs: Any) -> APIRouter:
    """The router of a MOR endpoint module: an API-key router whose routes all answer 403 to a
    company not enabled for MOR (and say so in the OpenAPI document)."""
    responses = {**error_responses(403), **kwargs.pop("responses", {})}
    return api_router(dependencies=[Depends(require_mor_company)], responses=responses, **kwargs)
