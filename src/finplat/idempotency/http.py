"""The `Idempotency-Key` header and claiming a key for the current HTTP request."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated

from fastapi import Header, Request
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth.principal import Principal
from finplat.config import Settings
from finplat.idempotency import service
from finplat.idempotency.service import Claim

IdempotencyKeyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=service.MAX_KEY_LENGTH,
        pattern=service.KEY_PATTERN,
        description="Makes the call safe to retry: a retry with the same key and request gets "
        "the first response and causes no second effect. Up to 255 characters; kept 24 hours.",
    ),
]


@dataclass(frozen=True)
class RequestClaim:
    claim: Claim
    fingerprint: str
    method: str
    path: str
    scope: str = service.REQUEST_SCOPE


async def claim_request(
    request: Request,
    session: AsyncSession,
    principal: Principal,
    key: str | None,
    *,
    required: bool = False,
) -> Claim:
    """Claim the request's key (or raise a replay / 409). Without a key the operation runs
    once with an ephemeral claim, unless the operation requires a key (400)."""
    return await claim_for(
        request, session, company_id=principal.company_id, key=key, required=required
    )


async def claim_for(
    request: Request,
    session: AsyncSession,
    *,
    company_id: int,
    key: str | None,
    scope: str = service.REQUEST_SCOPE,
    required: bool = False,
) -> Claim:
    """`claim_request` for the company the request acts on, in `scope`: a platform operator
    acting on a company claims its keys in a scope of its own, apart from the company's."""
    if key is None:
        if required:
            raise service.IdempotencyKeyRequired()
        return service.ephemeral_claim(company_id)
    settings: Settings = request.app.state.settings
    method, path = request.method, request.url.path
    fingerprint = service.fingerprint(method, path, request.url.query, await request.body())
    claim = await service.claim(
        session,
        company_id=company_id,
        key=key,
        fingerprint_=fingerprint,
        method=method,
        path=path,
        scope=scope,
        lease=timedelta(seconds=settings.idempotency_lease_seconds),
        wait=timedelta(seconds=settings.idempotency_wait_seconds),
    )
    request.state.idempotency = RequestClaim(claim, fingerprint, method, path, scope)
    return claim
