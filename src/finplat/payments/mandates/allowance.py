"""A mandate's allowance per period, kept in the ledger as a reservation.

Each period of a mandate has a ledger account (`mandate_allowance`, never negative) granted
`MaxAmount` once, from the mandate's grant account, when the period's first collection is
made. A collection's pending ledger transfer takes its amount out of that account (to
`mandate_allowance_used`) together with the money legs, so:
* the ledger's guarded debit refuses a collection beyond what is left, whatever runs in
  parallel;
* a pending or uncertain collection keeps its allowance (the reservation stays) until
  reconciliation posts or voids it; a failed one gives it back (void);
* what is left this period is the account's available balance (`RemainingThisPeriod`).

This is the "control account" pattern of double-entry ledgers (TigerBeetle's balance-bounds
and rate-limiting recipes): the accounts hold no money, only a limit, and every transfer
still balances.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.models import LedgerAccount
from finplat.payments.mandates.models import MandateFrequencyV2, PaymentMandate

ALLOWANCE = "mandate_allowance"
GRANT = "mandate_allowance_grant"
USED = "mandate_allowance_used"
OWNER = "mandate"
LEDGER_CODE = "payments.mandate_allowance"
WHOLE_LIFE = "ONCE"


def period_of(frequency: MandateFrequencyV2, on: date) -> str:
    """The period `on` falls in: `2026-W48`, `2026-11`, `2026`, or `ONCE` for one-time."""
    if frequency is MandateFrequencyV2.WEEKLY:
        year, week, _ = on.isocalendar()
        return f"{year}-W{week:02d}"
    if frequency is MandateFrequencyV2.MONTHLY:
        return f"{on.year}-{on.month:02d}"
    if frequency is MandateFrequencyV2.YEARLY:
        return str(on.year)
    return WHOLE_LIFE


def period_key(mandate: PaymentMandate, period: str) -> ledger.AccountKey:
    """The period's allowance account (never negative: the ledger's guard is the limit)."""
    return ledger.AccountKey(ALLOWANCE, OWNER, f"{mandate.id}:{period}")


def used_key(mandate: PaymentMandate) -> ledger.AccountKey:
    """Where a collection's allowance goes: what the mandate used, every period."""
    return ledger.AccountKey(USED, OWNER, mandate.id)


async def _account(
    session: AsyncSession, mandate: PaymentMandate, key: ledger.AccountKey
) -> LedgerAccount:
    [found] = await ledger.accounts_of(
        session, company_id=mandate.company_id, currency=mandate.currency, keys=[key]
    )
    return found


async def period_account(
    session: AsyncSession, mandate: PaymentMandate, period: str
) -> LedgerAccount:
    return await _account(session, mandate, period_key(mandate, period))


async def grant(session: AsyncSession, mandate: PaymentMandate, period: str) -> None:
    """Grant the period's `MaxAmount` once. Call with the mandate row locked: the lock makes
    the check-then-grant single."""
    if mandate.allowance_period == period:
        return
    source, target = await ledger.accounts_of(
        session,
        company_id=mandate.company_id,
        currency=mandate.currency,
        keys=[
            ledger.AccountKey(GRANT, OWNER, mandate.id, allow_negative=True),
            period_key(mandate, period),
        ],
    )
    await ledger.post_transfer(
        session,
        company_id=mandate.company_id,
        legs=[Leg(source.id, -mandate.max_amount_minor), Leg(target.id, mandate.max_amount_minor)],
        code=LEDGER_CODE,
        reference=f"{mandate.id}:{period}",
    )
    mandate.allowance_period = period
    await session.flush()


def legs(period: LedgerAccount, used: LedgerAccount, amount_minor: int) -> list[Leg]:
    """The allowance legs of a collection's pending transfer, between the accounts of
    `period_key` and `used_key`."""
    return [Leg(period.id, -amount_minor), Leg(used.id, amount_minor)]


async def left(session: AsyncSession, mandate: PaymentMandate, period: str) -> int:
    """What the period's allowance still allows (the full `MaxAmount` before its first
    collection)."""
    if mandate.allowance_period != period:
        return mandate.max_amount_minor
    account = await period_account(session, mandate, period)
    held = await ledger.balance_of(session, account)
    return held.available
