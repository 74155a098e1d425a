"""The crypto rail's `withdrawal.updated` callback: read strictly, then settled once."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.withdrawals import service
from finplat.kit.fields import SafeText
from finplat.providers import inbound
from finplat.providers.crypto.withdrawals import Withdrawal, WithdrawalStatus
from finplat.providers.names import ExternalProvider


class WithdrawalUpdated(BaseModel):
    """The `data` of `withdrawal.updated` (strict JSON types; added fields are ignored)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    withdrawalId: Annotated[SafeText, Field(max_length=64)]
    idempotencyKey: Annotated[SafeText, Field(max_length=128)]
    status: Annotated[WithdrawalStatus, Field(strict=False)]
    txHash: Annotated[SafeText, Field(max_length=100)] | None = None
    reason: Annotated[str, Field(max_length=200)] | None = None


@inbound.handler(ExternalProvider.CRYPTO.value, "withdrawal.updated")
async def on_withdrawal_updated(
    session: AsyncSession, company_id: int, data: dict[str, Any]
) -> None:
    update = WithdrawalUpdated.model_validate(data)
    await service.settle_by_key(
        session,
        company_id=company_id,
        provider=ExternalProvider.CRYPTO.value,
        key=update.idempotencyKey,
        sent=Withdrawal(update.withdrawalId, update.status, update.txHash, update.reason),
    )
