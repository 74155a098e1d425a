"""The crypto rail's `deposit.updated` callback: read strictly, then folded into the deposit."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.crypto.deposits import service
from finplat.kit.fields import SafeText
from finplat.providers import inbound
from finplat.providers.crypto.port import ChainDepositStatus
from finplat.providers.names import ExternalProvider

# A token amount as exact decimal text: at most 30 integer digits and 18 decimals (the most
# any ERC-20 token has), never an exponent or a sign.
_AMOUNT = re.compile(r"(?:0|[1-9][0-9]{0,29})(?:\.[0-9]{1,18})?")
_TOKEN = re.compile(r"[A-Za-z0-9.]{1,16}")


def _amount(text: str) -> str:
    if not _AMOUNT.fullmatch(text) or Decimal(text) <= 0:
        raise ValueError("Must be a positive decimal amount.")
    return text


def _token(text: str) -> str:
    if not _TOKEN.fullmatch(text):
        raise ValueError("Must be a token symbol.")
    return text


class DepositUpdated(BaseModel):
    """The `data` of `deposit.updated` (strict JSON types; fields the rail adds are ignored)."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    depositId: Annotated[SafeText, Field(max_length=64)]
    txHash: Annotated[SafeText, Field(max_length=100)]
    address: Annotated[SafeText, Field(max_length=64)]
    chainId: Annotated[int, Field(ge=-(2**31), lt=2**31)]
    token: Annotated[str, AfterValidator(_token)]
    amount: Annotated[str, AfterValidator(_amount)]
    confirmations: Annotated[int, Field(ge=0, lt=2**31)]
    status: Annotated[ChainDepositStatus, Field(strict=False)]


@inbound.handler(ExternalProvider.CRYPTO.value, "deposit.updated")
async def on_deposit_updated(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    update = DepositUpdated.model_validate(data)
    await service.apply_report(
        session,
        company_id=company_id,
        report=service.Report(
            provider=ExternalProvider.CRYPTO.value,
            deposit_id=update.depositId,
            tx_hash=update.txHash,
            address=update.address,
            chain_id=update.chainId,
            token=update.token,
            amount=Decimal(update.amount),
            confirmations=update.confirmations,
            status=update.status,
        ),
    )
