"""Sandbox wallet withdrawals: the one-time code the user was emailed (what their inbox would
show), and the chain confirming or failing a broadcast withdrawal."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import Request
from pydantic import ConfigDict, Field

from finplat.config import Settings
from finplat.crypto.addresses.service import NO_CRYPTO
from finplat.crypto.exchange.schemas import TransferIdPath
from finplat.crypto.transfers.models import TransferStatus
from finplat.crypto.withdrawals import service as withdrawals
from finplat.crypto.withdrawals.schemas import WalletWithdrawalResponse
from finplat.errors import Conflict, NotFound, error_responses
from finplat.http.routing import CurrentPrincipal, CurrentProviders, DbSession, api_router
from finplat.kit.schemas import RequestModel, ResponseModel, UserIdQuery
from finplat.providers.calls import commit_then_call
from finplat.providers.crypto.withdrawals import SandboxWithdrawalSimulation
from finplat.providers.messaging.sandbox.adapter import sent_code
from finplat.providers.registry import configured
from finplat.providers.sandbox import delivery as sandbox_delivery

router = api_router(tags=["Sandbox"])


class CodeNotSent(NotFound):
    code = "CODE_NOT_SENT"
    message = "No one-time code was emailed for this withdrawal."


class WithdrawalNotBroadcast(Conflict):
    code = "TRANSFER_NOT_PENDING"
    message = "The withdrawal is not waiting on the chain."


class SentWithdrawalCode(ResponseModel):
    TransferId: str
    Code: str = Field(description="The one-time code the user was emailed.")
    Status: str
    ExpiresAt: datetime


class ChainOutcome(RequestModel):
    model_config = ConfigDict(json_schema_extra={"example": {"Outcome": "CONFIRMED"}})

    Outcome: Literal["CONFIRMED", "FAILED"] = Field(
        description="`CONFIRMED`: final on the chain; `FAILED`: reverted."
    )


@router.get(
    "/api/v2/sandbox/crypto/wallet-withdrawals/{transferId}/code",
    response_model=SentWithdrawalCode,
    summary="The one-time code a wallet withdrawal emailed (sandbox)",
    description="What the user would read in their inbox: the code to confirm the "
    "withdrawal with (the latest, if a retried initiate sent a new one).",
    responses=error_responses(400, 404),
)
async def crypto_sandbox_withdrawal_code(
    transferId: TransferIdPath, userId: UserIdQuery, session: DbSession, principal: CurrentPrincipal
) -> SentWithdrawalCode:
    found = await withdrawals.get(
        session, company_id=principal.company_id, user_id=userId, transfer_id=transferId
    )
    code = await sent_code(session, company_id=principal.company_id, reference=transferId)
    if code is None:
        raise CodeNotSent()
    return SentWithdrawalCode(
        TransferId=transferId,
        Code=code,
        Status=found.transfer.status,
        ExpiresAt=found.withdrawal.code_expires_at,
    )


@router.post(
    "/api/v2/sandbox/crypto/wallet-withdrawals/{transferId}/settle",
    response_model=WalletWithdrawalResponse,
    summary="Confirm or fail a broadcast wallet withdrawal on the chain (sandbox)",
    description="The rail reports the outcome (`withdrawal.updated`), delivered at once: "
    "`CONFIRMED` completes the withdrawal (amount and network fee posted), `FAILED` fails it "
    "(both released). 409 `TRANSFER_NOT_PENDING` unless the withdrawal was broadcast and is "
    "still pending.",
    responses=error_responses(400, 404, 409, 503),
)
async def crypto_sandbox_settle_withdrawal(
    transferId: TransferIdPath,
    userId: UserIdQuery,
    body: ChainOutcome,
    request: Request,
    providers: CurrentProviders,
    session: DbSession,
    principal: CurrentPrincipal,
) -> WalletWithdrawalResponse:
    company_id = principal.company_id
    found = await withdrawals.get(
        session, company_id=company_id, user_id=userId, transfer_id=transferId
    )
    reference = found.transfer.provider_reference
    if found.transfer.status != TransferStatus.PENDING.value or reference is None:
        raise WithdrawalNotBroadcast()
    rail = configured(providers.crypto, NO_CRYPTO)
    if not isinstance(rail, SandboxWithdrawalSimulation):
        raise Conflict("The crypto rail cannot simulate the chain.")
    confirmed = body.Outcome == "CONFIRMED"
    await commit_then_call(
        session,
        providers.policy,
        provider=rail.name,
        operation="settle_withdrawal",
        call=lambda: rail.settle_withdrawal(
            company_id=company_id, withdrawal_id=reference, confirmed=confirmed
        ),
        idempotent=False,
    )
    settings: Settings = request.app.state.settings
    await sandbox_delivery.deliver_due(
        request.app.state.session_factory,
        secret=settings.provider_callback_secret,
        company_id=company_id,
    )
    settled = await withdrawals.get(
        session, company_id=company_id, user_id=userId, transfer_id=transferId
    )
    return WalletWithdrawalResponse.of(settled)
