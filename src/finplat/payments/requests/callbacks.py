"""The banking provider's `payment_request.paid` callback `{requestId, paymentId, budgetId,
currency, amountMinor, payerName, paidAt}`: a payer paid a request in full.

Read with `RequestPaid` before anything is written (anything else is 400
`MALFORMED_CALLBACK`, see `providers.inbound`); applied once per request whatever event ids it
arrives under (the request row is locked and a `PAID` request is not credited again).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.schemas import BudgetCurrency
from finplat.kit.fields import SafeText
from finplat.payments.requests import service
from finplat.providers import inbound
from finplat.providers.banking.port import PAYMENT_REQUEST_PAID
from finplat.providers.names import ExternalProvider

MAX_PAID_MINOR = 10**15
ProviderId = Annotated[SafeText, Field(max_length=64)]


class RequestPaid(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)

    requestId: ProviderId
    paymentId: ProviderId
    currency: Annotated[BudgetCurrency, Field(strict=False)]
    amountMinor: Annotated[int, Field(gt=0, le=MAX_PAID_MINOR)]
    payerName: Annotated[str, Field(max_length=140)] | None = None
    paidAt: Annotated[datetime, Field(strict=False)] | None = None


@inbound.handler(ExternalProvider.BANKPROV.value, PAYMENT_REQUEST_PAID)
async def on_request_paid(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    paid = RequestPaid.model_validate(data)
    await service.apply_payment(
        session,
        company_id=company_id,
        provider_request_id=paid.requestId,
        payment_id=paid.paymentId,
        currency=paid.currency.value,
        amount_minor=paid.amountMinor,
        payer_name=paid.payerName,
        paid_at=paid.paidAt,
    )
