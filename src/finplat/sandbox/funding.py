"""Sandbox company funding: credit a company's master account (or its voucher or rewards
funding account) from the provider's settlement.

Phases (each a recovery point, so a retry after a crash resumes and never repeats the
provider call):
  started   -> reserve: pending transfer settlement -> master (announced, not spendable)
  reserved  -> provider confirms (derived idempotency key) -> post the transfer, record the
               `company.funded` event, store the response: one transaction
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import InvalidAmount
from finplat.events import service as events
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money, requested_amount
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers.calls import CallPolicy, commit_then_call
from finplat.providers.errors import ProviderRejected
from finplat.providers.funding.port import FundingRail

MAX_FUNDING = Decimal("1000000000")  # per request, in major units
# As long as a key is kept, so a retry within the key's life always finds its reservation.
RESERVATION_LIFETIME = idempotency.RETENTION
RESERVED = "reserved"
REJECTED = "rejected"


@dataclass(frozen=True)
class Funding:
    transfer_id: int
    money: Money
    provider_reference: str
    balance: ledger.Balance
    completed_at: datetime


def funding_amount(amount: Decimal, currency: str) -> Money:
    if amount <= 0 or amount > MAX_FUNDING:
        raise InvalidAmount(
            f"The amount must be greater than 0 and at most {MAX_FUNDING}.",
            validation_errors={"Amount": [f"Must be > 0 and <= {MAX_FUNDING}."]},
        )
    return requested_amount(amount, currency)


async def fund_company(
    session: AsyncSession,
    *,
    claim: Claim,
    company_id: int,
    money: Money,
    rail: FundingRail,
    policy: CallPolicy,
    account: CompanyAccount = CompanyAccount.MASTER,
) -> Funding:
    """Credit `money` to the company's `account` (the master account unless told) once the
    funding provider confirms."""
    # The credited account and the settlement it comes from, read together.
    accounts = await ledger.company_accounts_in(
        session,
        company_id=company_id,
        kinds=[account, CompanyAccount.SETTLEMENT],
        currency=money.currency,
    )
    master, settlement = accounts[account], accounts[CompanyAccount.SETTLEMENT]
    reservation: ledger.Reservation | None = None
    if claim.recovery_point == idempotency.STARTED:
        reservation = await ledger.reserve(
            session,
            company_id=company_id,
            legs=[Leg(settlement.id, -money.minor), Leg(master.id, money.minor)],
            code="company.funding",
            expires_at=utcnow() + RESERVATION_LIFETIME,
            reference=claim.key,
            accounts=[settlement, master],
        )
        await idempotency.checkpoint(
            session, claim, RESERVED, pending_id=reservation.result.transfer_id
        )
    else:
        # Resuming: commit the key takeover so no lock is held across the provider call.
        await idempotency.checkpoint(session, claim, claim.recovery_point)
    if claim.recovery_point == REJECTED:
        raise ProviderRejected()
    pending_id = int(claim.state["pending_id"])
    try:
        confirmation = await commit_then_call(
            session,  # ends any read since the checkpoint: no lock across the call
            policy,
            provider=rail.name,
            operation="confirm_incoming_funds",
            call=lambda: rail.confirm_incoming_funds(
                idempotency_key=claim.derived_key("confirm-funding"),
                company_id=company_id,
                currency=money.currency,
                amount_minor=money.minor,
            ),
            idempotent=True,
        )
    except ProviderRejected:
        await ledger.void_pending(session, company_id=company_id, pending_id=pending_id)
        await idempotency.checkpoint(session, claim, REJECTED)
        raise
    posted = await ledger.post_pending(
        session,
        company_id=company_id,
        pending_id=pending_id,
        details={"provider_reference": confirmation.provider_reference},
        reservation=reservation,
    )
    await events.record(
        session,
        company_id=company_id,
        type_="company.funded",
        domain="company",
        provider=rail.name,
        data={
            "transferId": posted.transfer_id,
            "currency": money.currency,
            "amount": money.amount,
            "account": account.name,
            "providerReference": confirmation.provider_reference,
        },
    )
    balance = await ledger.balance(session, company_id=company_id, account_id=master.id)
    return Funding(posted.transfer_id, money, confirmation.provider_reference, balance, utcnow())
