"""`BearerUser`: the simple user whose bearer token came with the request.

Self-service routes of a MOR merchant's simple users take the company's `x-api-key` (as every
MOR route) and `Authorization: Bearer <AccessToken>` from `POST /api/v2/mor/public/auth/token`;
the token must be a live token of an ACTIVE user of the key's company, else 401
`BEARER_TOKEN_INVALID` (a token of company A with company B's key is unknown to B). The route
then acts only on that user: no user id is taken from the request, so one user's token can
never reach another user's data.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from finplat.http.openapi import BEARER_SCHEME
from finplat.http.routing import CurrentPrincipal, DbSession
from finplat.mor.identity import service
from finplat.users.models import User

# auto_error=False: a missing or malformed header is the service's 401 in the standard body.
bearer_scheme = HTTPBearer(
    auto_error=False,
    scheme_name=BEARER_SCHEME,
    description="A MOR simple user's AccessToken (POST /api/v2/mor/public/auth/token).",
)


async def _bearer_user(
    session: DbSession,
    principal: CurrentPrincipal,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)],
) -> User:
    return await service.bearer_user(
        session,
        company_id=principal.company_id,
        token=credentials.credentials if credentials is not None else None,
    )


BearerUser = Annotated[User, Depends(_bearer_user)]
