"""Transactions: one with its refreshed status, the list with filters, and the banking
provider's confirmation of a payout."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.pagination import PageParams
from finplat.kit.schemas import MAX_ID, PARAMETER_ID
from finplat.transactions import service
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.schemas import (
    PaymentConfirmationResponse,
    TransactionPage,
    TransactionResponse,
)

router = api_router(tags=["Transactions"])

TransactionIdPath = Annotated[
    int, Path(alias="id", ge=1, le=MAX_ID, description="The transaction's `Id`."), PARAMETER_ID
]
OptionalUserIdQuery = Annotated[
    int | None,
    Query(
        ge=1,
        le=MAX_ID,
        description="Only this user's transactions. An unknown user is 404 `USER_NOT_FOUND`.",
    ),
    PARAMETER_ID,
]
# Stated in the document but checked by the service, so that a malformed id is answered with
# the specific 400 `INVALID_PAYMENT_ID` rather than the generic validation error.
PaymentIdPath = Annotated[
    str,
    Path(
        alias="id",
        description=f"The payout's transaction `Id`: a positive integer of at most {MAX_ID}, "
        "in decimal without sign or leading zeros. Anything else is 400 `INVALID_PAYMENT_ID`.",
        json_schema_extra={"pattern": service.PAYMENT_ID_PATTERN},
    ),
]


@router.get(
    "/api/v2/transactions",
    response_model=TransactionPage,
    summary="List transactions",
    description="The company's transactions, newest first; one user's with `userId`. "
    "`types` and `statuses` filter (repeat the parameter for several values, e.g. "
    "`types=PAYOUT&types=FX_TRADE`); a transaction matches when its type is one of `types` "
    "and its status one of `statuses`. Statuses are as stored: read one transaction to "
    "refresh it from the provider.",
    responses=error_responses(400, 404),
)
async def list_transactions(
    session: DbSession,
    principal: CurrentPrincipal,
    page: PageParams,
    userId: OptionalUserIdQuery = None,
    types: Annotated[
        list[TransactionType] | None,
        Query(description="Transaction types to include (all when omitted)."),
    ] = None,
    statuses: Annotated[
        list[TransactionStatus] | None,
        Query(description="Transaction statuses to include (all when omitted)."),
    ] = None,
) -> TransactionPage:
    rows = await service.list_transactions(
        session,
        company_id=principal.company_id,
        page=page,
        user_id=userId,
        types=types or (),
        statuses=statuses or (),
    )
    return TransactionPage.of(rows, page, TransactionResponse.of)


@router.get(
    "/api/v2/transactions/{id}",
    response_model=TransactionResponse,
    summary="Get a transaction, with its status refreshed",
    description="A pending transaction's status is refreshed from its provider before the "
    "answer. If the provider cannot answer, the stored state is returned (still `PENDING`), "
    "never an error. With `userId`, the transaction must be that user's (404 otherwise).",
    responses=error_responses(400, 404),
)
async def get_transaction(
    transaction_id: TransactionIdPath,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    userId: OptionalUserIdQuery = None,
) -> TransactionResponse:
    transaction = await service.refreshed(
        session,
        providers,
        company_id=principal.company_id,
        transaction_id=transaction_id,
        user_id=userId,
    )
    return TransactionResponse.of(transaction)


@router.get(
    "/api/v2/transactions/{id}/bankprov/payment-confirmation",
    response_model=PaymentConfirmationResponse,
    summary="The banking provider's confirmation of a payout",
    description="Proof from the banking provider that a payout was executed. `id` is the "
    "payout's transaction `Id`. A malformed id is 400 `INVALID_PAYMENT_ID`; a transaction "
    "that is not a banking-provider payout known to the provider is 404 `PAYMENT_NOT_FOUND`; "
    "the provider refusing to confirm (for example, the payment has not completed yet) is 400 "
    "`PAYMENT_CONFIRMATION_REJECTED`, as the spec prescribes for a provider rejection.",
    responses=error_responses(400, 404, 503),
)
async def transaction_payment_confirmation(
    payment_id: PaymentIdPath,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> PaymentConfirmationResponse:
    confirmed = await service.payment_confirmation(
        session, providers, company_id=principal.company_id, payment_id=payment_id
    )
    return PaymentConfirmationResponse.of(confirmed)
