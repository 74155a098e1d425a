"""MOR simple users (spec: `POST /api/v2/mor/public/users`), their bearer tokens and the
self-service routes a token opens: the user's own profile, KYC link and cards."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request, Response, status

from finplat.cards.schemas import CardResponse, CardsResponse
from finplat.config import Settings
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, address_of
from finplat.idempotency.http import IdempotencyKeyHeader, claim_for
from finplat.kit.money import requested_amount
from finplat.kit.pagination import PageParams
from finplat.kyc.schemas import KycQuestionnaire
from finplat.mor.access import PREFIX, mor_router
from finplat.mor.cards import load_requests
from finplat.mor.cards.load_request_states import MorLoadRequestStatus
from finplat.mor.cards.schemas import (
    MorLoadRequestResponse,
    MorLoadRequestsPage,
    MorOwnLoadRequestCreate,
)
from finplat.mor.identity import service
from finplat.mor.identity.bearer import BearerUser
from finplat.mor.identity.schemas import (
    MorKycLinkRequest,
    MorKycLinkResponse,
    MorPasswordChange,
    MorSimpleUserRequest,
    MorSimpleUserResponse,
    MorTokenRequest,
    MorTokenResponse,
    MorTokenRevocation,
)
from finplat.mor.identity.throttle import SignInThrottle

router = mor_router(tags=["MOR"])
BEARER = (
    " Needs `Authorization: Bearer <AccessToken>` of a simple user of the key's company "
    "(401 `BEARER_TOKEN_INVALID` otherwise) and acts on that user only."
)


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _throttle(request: Request) -> SignInThrottle:
    throttle: SignInThrottle = request.app.state.mor_sign_in_throttle
    return throttle


@router.post(
    f"{PREFIX}/users",
    response_model=MorSimpleUserResponse,
    summary="Add a simple user to the MOR merchant",
    description="Creates a personal user of the key's company with a password it signs in "
    "with (`POST /api/v2/mor/public/auth/token`). `Email` is unique in the company, without "
    "regard to case (409 `MOR_USER_EMAIL_EXISTS`); a password outside the policy is 400 "
    "`VALIDATION_ERROR` naming `Password`. The password is stored as an argon2id hash and "
    "never returned.",
    responses=error_responses(400, 409),
)
async def mor_create_user(
    body: MorSimpleUserRequest, request: Request, session: DbSession, principal: CurrentPrincipal
) -> MorSimpleUserResponse:
    created = await service.create_simple_user(
        session,
        _settings(request),
        company_id=principal.company_id,
        email=body.Email,
        first_name=body.FirstName,
        last_name=body.LastName,
        password=body.Password,
    )
    return MorSimpleUserResponse.of(created.user)


@router.post(
    f"{PREFIX}/auth/token",
    response_model=MorTokenResponse,
    summary="Sign a simple user in: a short-lived bearer token",
    description="`{Email, Password}` of a simple user of the key's company gives an "
    "`AccessToken` valid until `ExpiresAt` (15 minutes by default). Wrong email or password: "
    "401 `INVALID_CREDENTIALS`, the same whichever was wrong. Repeated failures for one email "
    "or from one address: 429 `SIGN_IN_THROTTLED` with `Retry-After`.",
    responses=error_responses(400, 401, 429),
)
async def mor_issue_token(
    body: MorTokenRequest, request: Request, session: DbSession, principal: CurrentPrincipal
) -> MorTokenResponse:
    issued = await service.issue_token(
        session,
        _settings(request),
        _throttle(request),
        company_id=principal.company_id,
        email=body.Email,
        password=body.Password,
        address=address_of(request),
    )
    return MorTokenResponse(AccessToken=issued.access_token, ExpiresAt=issued.expires_at)


@router.post(
    f"{PREFIX}/auth/revoke",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Revoke a bearer token",
    description="The token sent stops working at once. Revoking a token already revoked, "
    "expired or unknown answers the same 204.",
    responses=error_responses(400),
)
async def mor_revoke_token(
    body: MorTokenRevocation, session: DbSession, principal: CurrentPrincipal
) -> Response:
    await service.revoke_token(session, company_id=principal.company_id, token=body.AccessToken)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    f"{PREFIX}/me",
    response_model=MorSimpleUserResponse,
    summary="The signed-in simple user's profile",
    description="The user the bearer token belongs to." + BEARER,
    responses=error_responses(401),
)
async def mor_me(user: BearerUser) -> MorSimpleUserResponse:
    return MorSimpleUserResponse.of(user)


@router.post(
    f"{PREFIX}/me/password",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Change the signed-in simple user's password",
    description="`CurrentPassword` must be right (403 `CURRENT_PASSWORD_WRONG`); `NewPassword` "
    "follows the password policy (400). Every token of the user is revoked, this one "
    "included." + BEARER,
    responses=error_responses(400, 401, 403),
)
async def mor_change_password(
    body: MorPasswordChange, request: Request, user: BearerUser, session: DbSession
) -> Response:
    await service.change_password(
        session,
        _settings(request),
        company_id=user.company_id,
        user=user,
        current_password=body.CurrentPassword,
        new_password=body.NewPassword,
    )
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post(
    f"{PREFIX}/me/kyc-url",
    response_model=MorKycLinkResponse,
    summary="The signed-in simple user's hosted verification link",
    description="Sets the user's `DateOfBirth` and `Country`, then starts (or continues) its "
    "identity verification with the hosted link, under the KYC rules of "
    "`POST /api/v2/users/{userId}/sumsub/kyc-url` (one method per user, 409 once approved or "
    "rejected, `Ssn` when the effective nationality is US)." + BEARER,
    responses=error_responses(400, 401, 409, 503),
)
async def mor_own_kyc_url(
    body: MorKycLinkRequest,
    request: Request,
    user: BearerUser,
    session: DbSession,
    providers: CurrentProviders,
) -> MorKycLinkResponse:
    settings = _settings(request)
    started = await service.start_own_kyc(
        session,
        providers,
        user=user,
        questionnaire=KycQuestionnaire.model_construct(
            **{name: getattr(body, name) for name in KycQuestionnaire.model_fields}
        ),
        date_of_birth=body.DateOfBirth,
        country=body.Country,
        base_url=settings.public_base_url or str(request.base_url),
    )
    return MorKycLinkResponse(
        Url=started.token.url if started.token else None,
        ExpiresAt=started.token.expires_at if started.token else None,
        KycSubmissionId=started.submission.id,
        Status=started.user.kyc_status,
    )


@router.get(
    f"{PREFIX}/me/cards",
    response_model=CardsResponse,
    summary="The signed-in simple user's cards",
    description="The user's own cards, masked (`cardNo` empty, `cvv` `***`), with balances."
    + BEARER,
    responses=error_responses(401, 503),
)
async def mor_own_cards(user: BearerUser, session: DbSession) -> CardsResponse:
    found = await service.own_cards(session, user=user)
    return CardsResponse(
        Cards=[CardResponse.of(v.card, available=v.available, posted=v.posted) for v in found]
    )


@router.post(
    f"{PREFIX}/me/load-requests",
    response_model=MorLoadRequestResponse,
    status_code=status.HTTP_201_CREATED,
    summary="The signed-in simple user asks for a load onto its card",
    description="As `POST /api/v2/mor/public/load-requests` with the bearer token's user as "
    "`UserId`: `PENDING` until the merchant approves or declines it; the card must be assigned "
    "to the user (409 `MOR_CARD_NOT_ASSIGNED_TO_USER`). Safe to retry with `Idempotency-Key` "
    "(each user's keys are its own)." + BEARER,
    responses=error_responses(400, 404, 409),
)
async def mor_own_load_request_create(
    body: MorOwnLoadRequestCreate,
    user: BearerUser,
    request: Request,
    session: DbSession,
    idempotency_key: IdempotencyKeyHeader = None,
) -> MorLoadRequestResponse:
    money = requested_amount(body.Amount, body.Currency.value, field="Amount")
    # A scope per user: one user's key never answers another user's request.
    await claim_for(
        request,
        session,
        company_id=user.company_id,
        key=idempotency_key,
        scope=f"mor-user:{user.id}",
    )
    row = await load_requests.create(
        session,
        company_id=user.company_id,
        user_id=user.id,
        card_id=body.CardId,
        money=money,
        note=body.Note,
    )
    return MorLoadRequestResponse.of(row)


@router.get(
    f"{PREFIX}/me/load-requests",
    response_model=MorLoadRequestsPage,
    summary="The signed-in simple user's load requests",
    description="Newest first; `status` narrows the list." + BEARER,
    responses=error_responses(400, 401),
)
async def mor_own_load_requests(
    user: BearerUser,
    session: DbSession,
    page: PageParams,
    status_: Annotated[MorLoadRequestStatus | None, Query(alias="status")] = None,
) -> MorLoadRequestsPage:
    found = await load_requests.page(
        session,
        company_id=user.company_id,
        status=status_.value if status_ is not None else None,
        user_id=user.id,
        card_id=None,
        request=page,
    )
    return MorLoadRequestsPage(
        Items=[MorLoadRequestResponse.of(r) for r in found.rows],
        Page=page.page,
        PageSize=page.page_size,
        HasMore=found.has_more,
    )
