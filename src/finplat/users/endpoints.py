from __future__ import annotations

from typing import Annotated

from fastapi import Query, status

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.kit.fields import SAFE_TEXT_PATTERN
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import UserIdPath
from finplat.users import service
from finplat.users.schemas import TierSelection, UserCreate, UserPage, UserResponse

router = api_router(tags=["Users"])


@router.post(
    "/api/v2/users",
    response_model=UserResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Create a user",
    responses=error_responses(400, 409),
)
async def create_user(
    body: UserCreate, session: DbSession, principal: CurrentPrincipal
) -> UserResponse:
    user = await service.create_user(session, company_id=principal.company_id, data=body)
    return UserResponse.of(user)


@router.get(
    "/api/v2/users",
    response_model=UserPage,
    summary="List users",
    description="Users of the key's company, oldest first.",
    responses=error_responses(400),
)
async def list_users(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    externalUserId: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=255,
            pattern=SAFE_TEXT_PATTERN,
            description="Only the user with this ExternalUserId.",
        ),
    ] = None,
) -> UserPage:
    result = await service.list_users(
        session, company_id=principal.company_id, page=page, external_user_id=externalUserId
    )
    return UserPage.of(result, page, UserResponse.of)


@router.get(
    "/api/v2/users/{userId}",
    response_model=UserResponse,
    summary="Get a user",
    responses=error_responses(400, 404),
)
async def get_user(
    userId: UserIdPath, session: DbSession, principal: CurrentPrincipal
) -> UserResponse:
    user = await service.get_user(session, company_id=principal.company_id, user_id=userId)
    return UserResponse.of(user)


@router.post(
    "/api/v2/users/{userId}/tier",
    response_model=UserResponse,
    summary="Select a user's tier",
    description="The tier must belong to the company (404 otherwise), be active and match the "
    "user's `AccountType` (409 otherwise). Returns the updated user.",
    responses=error_responses(400, 404, 409),
)
async def select_tier(
    userId: UserIdPath, body: TierSelection, session: DbSession, principal: CurrentPrincipal
) -> UserResponse:
    user = await service.select_tier(
        session, company_id=principal.company_id, user_id=userId, tier_id=body.TierId
    )
    return UserResponse.of(user)
