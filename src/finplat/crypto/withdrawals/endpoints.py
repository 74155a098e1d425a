"""Wallet withdrawals: `bankprov-to-wallet/initiate` and `/confirm` under
`/api/v2/crypto-virtual-accounts`, with `userId`. Their status is the crypto transfer's
(`GET /api/v2/crypto-virtual-accounts/transfers/{transferId}`)."""

from __future__ import annotations

from datetime import timedelta

from fastapi import Request, status

from finplat.config import Settings
from finplat.crypto.withdrawals import codes, service
from finplat.crypto.withdrawals.schemas import (
    ConfirmWithdrawalRequest,
    InitiateWithdrawalRequest,
    WalletWithdrawalResponse,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request
from finplat.kit.money import requested_amount
from finplat.kit.schemas import UserIdQuery
from finplat.providers.crypto.port import Chain

router = api_router(tags=["Crypto"])


@router.post(
    "/api/v2/crypto-virtual-accounts/bankprov-to-wallet/initiate",
    response_model=WalletWithdrawalResponse,
    status_code=status.HTTP_201_CREATED,
    summary="Start a withdrawal to an external wallet",
    description="Reserves `Amount` and the chain's network fee in the user's crypto balance "
    "(409 `INSUFFICIENT_FUNDS`) and emails the user a six-digit code, valid 10 minutes, that "
    "`/confirm` takes (the sandbox shows it at "
    "`GET /api/v2/sandbox/crypto/wallet-withdrawals/{transferId}/code`). The destination must "
    "be an address of `ChainId` (400). The user must be identity-verified (409 "
    "`KYC_NOT_APPROVED`); an amount of at least `FINPLAT_CRYPTO_EDD_THRESHOLD` needs the "
    "user's enhanced due diligence (409 `EDD_REQUIRED`). Safe to retry with `Idempotency-Key` "
    "(a retry emails a new code).",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_wallet_withdrawal_initiate(
    userId: UserIdQuery,
    body: InitiateWithdrawalRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> WalletWithdrawalResponse:
    settings: Settings = request.app.state.settings
    claim = await claim_request(request, session, principal, idempotency_key)
    found = await service.initiate(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        user_id=userId,
        money=requested_amount(body.Amount, body.CryptoCurrency),
        chain=Chain(body.ChainId),
        address=body.DestinationAddress,
        edd_threshold=settings.crypto_edd_threshold,
        code_key=codes.code_key(settings),
    )
    return WalletWithdrawalResponse.of(found)


@router.post(
    "/api/v2/crypto-virtual-accounts/bankprov-to-wallet/confirm",
    response_model=WalletWithdrawalResponse,
    summary="Confirm a withdrawal to an external wallet with its code",
    description="With the emailed code the withdrawal goes to the rail, once whatever the "
    "retries: `PENDING` until the chain confirms it (`COMPLETED`) or it fails (`FAILED`, "
    "amount and fee released). To an address the user never sent to on that chain it first "
    "waits `COOLING_OFF` until `ReleaseAt` (`FINPLAT_CRYPTO_WITHDRAWAL_COOLING_OFF_HOURS`). "
    "A wrong code is 403 `INVALID_VERIFICATION_CODE`; the fifth wrong one fails the "
    "withdrawal (409 `WITHDRAWAL_LOCKED`); a late one expires it (409 "
    "`VERIFICATION_EXPIRED`). A withdrawal already confirmed is answered as it stands. "
    "Safe to retry with `Idempotency-Key`.",
    responses=error_responses(400, 403, 404, 409, 503),
)
async def crypto_wallet_withdrawal_confirm(
    userId: UserIdQuery,
    body: ConfirmWithdrawalRequest,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> WalletWithdrawalResponse:
    settings: Settings = request.app.state.settings
    claim = await claim_request(request, session, principal, idempotency_key)
    found = await service.confirm(
        session,
        providers,
        claim=claim,
        company_id=principal.company_id,
        user_id=userId,
        transfer_id=body.TransferId,
        code=body.Code,
        code_key=codes.code_key(settings),
        cooling_off=timedelta(hours=settings.crypto_withdrawal_cooling_off_hours),
    )
    return WalletWithdrawalResponse.of(found)
