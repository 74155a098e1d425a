"""Money arriving in a budget from outside (SEPA or FPS credits), reported by the banking
provider's `payment.received` callback.

The provider has already credited its balance, so the ledger posts settlement → budget at
once, records a `COMPLETED` `INCOMING_PAYMENT` transaction and a `payment.received` event.
The callback is processed exactly once (inbound deduplication), so the money is too.
"""

from __future__ import annotations

from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import budgets
from finplat.events import service as events
from finplat.kit.money import from_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers import inbound
from finplat.providers.banking.base import PAYMENT_RECEIVED
from finplat.providers.names import BankProvider, ExternalProvider
from finplat.provisioning import service as provisioning
from finplat.transactions import service as transactions
from finplat.transactions.kinds import TransactionStatus, TransactionType

log = structlog.get_logger("finplat.banking")
PROVIDER = BankProvider.BANKPROV.value


@inbound.handler(ExternalProvider.BANKPROV.value, PAYMENT_RECEIVED)
async def on_payment_received(session: AsyncSession, company_id: int, data: dict[str, Any]) -> None:
    account = await provisioning.by_provider_account(
        session, company_id=company_id, provider=BankProvider.BANKPROV, account_id=data["accountId"]
    )
    if account is None:
        log.warning("incoming_payment_for_unknown_account")
        return
    currency = str(data["currency"])
    amount = int(data["amountMinor"])
    if amount <= 0:
        raise ValueError("an incoming payment must be positive")
    budget = await budgets.adopt(
        session,
        company_id=company_id,
        user_id=account.user_id,
        account_id=str(data["accountId"]),
        provider_budget_id=str(data["budgetId"]),
        name=str(data.get("budgetName") or "Budget"),
        is_default=bool(data.get("budgetIsDefault", False)),
        currencies=[currency],
    )
    target = await budgets.ledger_account(
        session, company_id=company_id, budget_id=budget.id, currency=currency
    )
    settlement = await ledger.company_account(
        session, company_id=company_id, kind=CompanyAccount.SETTLEMENT, currency=currency
    )
    posted = await ledger.post_transfer(
        session,
        company_id=company_id,
        legs=[Leg(settlement.id, -amount), Leg(target.id, amount)],
        code="banking.incoming",
        reference=str(data["paymentId"]),
    )
    metadata = {
        "scheme": data.get("scheme"),
        "senderName": data.get("senderName"),
        "reference": data.get("reference"),
        "ledgerTransferId": posted.transfer_id,
    }
    transaction = await transactions.record(
        session,
        company_id=company_id,
        user_id=account.user_id,
        type_=TransactionType.INCOMING_PAYMENT,
        status=TransactionStatus.COMPLETED,
        provider=PROVIDER,
        amount_minor=amount,
        currency=currency,
        budget_id=budget.id,
        provider_reference=str(data["paymentId"]),
        metadata=metadata,
    )
    await events.record(
        session,
        company_id=company_id,
        type_="payment.received",
        domain="payment",
        provider=PROVIDER,
        data={
            "transactionId": transaction.id,
            "userId": account.user_id,
            "budgetId": budget.id,
            "currency": currency,
            "amount": from_minor(amount, currency),
            "scheme": data.get("scheme"),
        },
    )
