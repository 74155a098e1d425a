"""Payees: the required-fields form, creation with a verification challenge, verification,
list, read and delete."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Request, Response, status
from starlette.convertors import Convertor, register_url_convertor

from finplat.banking.discovery import NO_BANKING
from finplat.banking.identifiers import PAYEE_ID_PATTERN
from finplat.banking.payees import service
from finplat.banking.payees.required_fields import PayeeCurrency, PaymentMethod, PaymentType
from finplat.banking.payees.schemas import (
    FieldResponse,
    PayeeChallengeResponse,
    PayeeCreate,
    PayeePage,
    PayeeResponse,
    PayeeVerify,
    RequiredFieldsResponse,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import UserIdQuery
from finplat.providers.registry import configured

router = api_router(tags=["Banking"])


class PayeeIdConvertor(Convertor[str]):
    """Only a payee id's shape routes to `/payees/{payeeId}`, so `/payees/required-fields`
    is that route's alone (its allowed methods included)."""

    regex = PAYEE_ID_PATTERN.strip("^$")

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("payee_id", PayeeIdConvertor())

PayeeIdPath = Annotated[
    str,
    Path(pattern=PAYEE_ID_PATTERN, description="The `PayeeId` the service returned."),
]


@router.get(
    "/api/v2/banking/payees/required-fields",
    response_model=RequiredFieldsResponse,
    summary="The fields a payee needs for a payment method and currency",
    description="The form to collect a payee's details. A method that does not carry the "
    "currency answers `Supported: false` with no fields. The user must exist; a banking "
    "account is not needed.",
    responses=error_responses(400, 404),
)
async def payees_required_fields(
    userId: UserIdQuery,
    paymentType: Annotated[PaymentType, Query(description="COMPANY or INDIVIDUAL.")],
    paymentMethod: Annotated[PaymentMethod, Query(description="How the payee is paid.")],
    currency: Annotated[PayeeCurrency, Query(description="The currency the payee receives.")],
    session: DbSession,
    principal: CurrentPrincipal,
) -> RequiredFieldsResponse:
    fields = await service.form(
        session,
        company_id=principal.company_id,
        user_id=userId,
        method=paymentMethod,
        currency=currency,
    )
    return RequiredFieldsResponse(
        PaymentType=paymentType,
        PaymentMethod=paymentMethod,
        Currency=currency,
        Supported=fields is not None,
        Fields=[FieldResponse.of(f) for f in fields or ()],
    )


@router.post(
    "/api/v2/banking/payees",
    response_model=PayeeChallengeResponse,
    status_code=status.HTTP_202_ACCEPTED,
    summary="Create a payee (verification challenge)",
    description="Stores the payee `PENDING_VERIFICATION` and answers a one-time "
    "`VerificationToken`, valid 10 minutes (`ExpiresAt`), for the partner to deliver to its "
    "user; confirm it with `POST /api/v2/banking/payees/{payeeId}/verify`. The IBAN's check "
    "digits (400 `INVALID_IBAN`), the BIC (400 `INVALID_BIC`) and, for SEPA methods, the "
    "IBAN's country (400 `IBAN_NOT_SEPA`) are verified. Needs an active banking-provider "
    "account (409 `BANKING_ACCOUNT_NOT_ACTIVE`). Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409),
)
async def payees_create(
    userId: UserIdQuery,
    body: PayeeCreate,
    request: Request,
    response: Response,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> PayeeChallengeResponse:
    data = body.to_new_payee()
    service.check_request(data)
    account_id = await service.banking_account_id(
        session, company_id=principal.company_id, user_id=userId
    )
    await claim_request(request, session, principal, idempotency_key)  # replays end here
    challenge = await service.create(
        session, company_id=principal.company_id, user_id=userId, account_id=account_id, data=data
    )
    response.headers["Cache-Control"] = "no-store"  # the answer carries a one-time secret
    return PayeeChallengeResponse.of(challenge)


@router.post(
    "/api/v2/banking/payees/{payeeId:payee_id}/verify",
    response_model=PayeeResponse,
    summary="Confirm a payee with its verification token",
    description="With the right token the payee is registered at the banking provider and "
    "becomes `ACTIVE`. A wrong token is 403 `INVALID_VERIFICATION_TOKEN` and counts: the fifth "
    "locks the payee (`VERIFICATION_FAILED`, 409 `PAYEE_VERIFICATION_LOCKED`). An expired token "
    "is 409 `VERIFICATION_TOKEN_EXPIRED`, a verified payee 409 `PAYEE_ALREADY_VERIFIED`. "
    "After a provider timeout (503) retry with the same token: the registration is "
    "completed, never duplicated.",
    responses=error_responses(400, 403, 404, 409, 503),
)
async def payees_verify(
    payeeId: PayeeIdPath,
    userId: UserIdQuery,
    body: PayeeVerify,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PayeeResponse:
    banking = configured(providers.banking, NO_BANKING)
    payee = await service.verify(
        session,
        banking,
        providers.policy,
        company_id=principal.company_id,
        user_id=userId,
        payee_id=payeeId,
        token=body.VerificationToken,
    )
    return PayeeResponse.of(payee)


@router.get(
    "/api/v2/banking/payees",
    response_model=PayeePage,
    summary="List a user's payees",
    description="Newest first; deleted payees are not listed.",
    responses=error_responses(400, 404),
)
async def payees_list(
    userId: UserIdQuery, page: PageParams, session: DbSession, principal: CurrentPrincipal
) -> PayeePage:
    rows = await service.list_payees(
        session, company_id=principal.company_id, user_id=userId, page=page
    )
    return PayeePage.of(rows, page, PayeeResponse.of)


@router.get(
    "/api/v2/banking/payees/{payeeId:payee_id}",
    response_model=PayeeResponse,
    summary="Get a payee",
    responses=error_responses(400, 404),
)
async def payees_get(
    payeeId: PayeeIdPath, userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> PayeeResponse:
    payee = await service.get(
        session, company_id=principal.company_id, user_id=userId, payee_id=payeeId
    )
    return PayeeResponse.of(payee)


@router.delete(
    "/api/v2/banking/payees/{payeeId:payee_id}",
    response_model=PayeeResponse,
    summary="Delete a payee",
    description="The payee is removed at the banking provider and answered with Status "
    "`DELETED`; it is no longer listed and no payout can use it.",
    responses=error_responses(400, 404, 503),
)
async def payees_delete(
    payeeId: PayeeIdPath,
    userId: UserIdQuery,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PayeeResponse:
    banking = configured(providers.banking, NO_BANKING)
    payee = await service.delete(
        session,
        banking,
        providers.policy,
        company_id=principal.company_id,
        user_id=userId,
        payee_id=payeeId,
    )
    return PayeeResponse.of(payee)
