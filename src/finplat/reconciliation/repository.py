"""SQL of reconciliation (system scope for the company lists; company scope otherwise)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.models import BankingBalance, BankingBudget
from finplat.cards.funding.models import CardFunding
from finplat.cards.funding.service import FundingStatus
from finplat.cards.models import Card
from finplat.cards.status import CardStatus
from finplat.crypto.deposits import topups
from finplat.crypto.deposits.models import CryptoDeposit, DepositStatus
from finplat.crypto.transfers.models import CryptoTransfer
from finplat.ledger.models import LedgerBalance


async def companies_with_budget_balances(session: AsyncSession) -> list[int]:
    stmt = select(BankingBalance.company_id).distinct().order_by(BankingBalance.company_id)
    return [int(i) for i in (await session.execute(stmt)).scalars()]


async def budget_balances(
    session: AsyncSession, *, company_id: int
) -> list[tuple[BankingBalance, BankingBudget]]:
    """Every budget balance of the company with its budget, by provider account and budget."""
    stmt = (
        select(BankingBalance, BankingBudget)
        .join(BankingBudget, BankingBudget.id == BankingBalance.budget_id)
        .where(
            BankingBalance.company_id == company_id,
            BankingBudget.company_id == company_id,
        )
        .order_by(BankingBudget.account_id, BankingBudget.id, BankingBalance.currency)
    )
    return [(balance, budget) for balance, budget in (await session.execute(stmt)).all()]


# ------------------------------------------------------------------------------------ cards


async def companies_with_card_balances(session: AsyncSession) -> list[int]:
    """Companies with a card the provider has issued and not cancelled."""
    stmt = (
        select(Card.company_id)
        .where(Card.status != CardStatus.CANCELLED, Card.provider_card_id.is_not(None))
        .distinct()
        .order_by(Card.company_id)
    )
    return [int(i) for i in (await session.execute(stmt)).scalars()]


async def card_balances(session: AsyncSession, *, company_id: int) -> list[Card]:
    """The company's cards whose balance the provider holds: issued there, not cancelled."""
    stmt = (
        select(Card)
        .where(
            Card.company_id == company_id,
            Card.status != CardStatus.CANCELLED,
            Card.provider_card_id.is_not(None),
        )
        .order_by(Card.id)
    )
    return list((await session.execute(stmt)).scalars())


async def pending_card_fundings(
    session: AsyncSession, *, company_id: int, card_id: int
) -> list[CardFunding]:
    """The card's money movements still `PENDING` (their ledger reservation is pending)."""
    stmt = (
        select(CardFunding)
        .where(
            CardFunding.company_id == company_id,
            CardFunding.card_id == card_id,
            CardFunding.status == FundingStatus.PENDING.value,
        )
        .order_by(CardFunding.id)
        .execution_options(populate_existing=True)
    )
    return list((await session.execute(stmt)).scalars())


async def companies_with_stale_card_fundings(
    session: AsyncSession, *, before: datetime
) -> list[int]:
    stmt = (
        select(CardFunding.company_id)
        .where(CardFunding.status == FundingStatus.PENDING.value, CardFunding.created_at < before)
        .distinct()
        .order_by(CardFunding.company_id)
    )
    return [int(i) for i in (await session.execute(stmt)).scalars()]


async def stale_card_fundings(
    session: AsyncSession, *, company_id: int, before: datetime
) -> list[tuple[int, int]]:
    """(funding id, card id) of the company's card fundings `PENDING` since before `before`."""
    stmt = (
        select(CardFunding.id, CardFunding.card_id)
        .where(
            CardFunding.company_id == company_id,
            CardFunding.status == FundingStatus.PENDING.value,
            CardFunding.created_at < before,
        )
        .order_by(CardFunding.id)
    )
    return [(int(f), int(c)) for f, c in (await session.execute(stmt)).all()]


async def card_funding_statuses(
    session: AsyncSession, *, company_id: int, funding_ids: list[int]
) -> dict[int, str]:
    stmt = select(CardFunding.id, CardFunding.status).where(
        CardFunding.company_id == company_id, CardFunding.id.in_(funding_ids)
    )
    return {int(i): str(s) for i, s in (await session.execute(stmt)).all()}


async def cancelled_cards_holding_money(
    session: AsyncSession, *, company_id: int | None = None
) -> list[tuple[int, int]]:
    """`(company_id, card_id)` of cancelled cards whose ledger account still holds available
    money (every company's, or one company's)."""
    stmt = (
        select(Card.company_id, Card.id)
        .join(LedgerBalance, LedgerBalance.account_id == Card.ledger_account_id)
        .where(Card.status == CardStatus.CANCELLED)
        .group_by(Card.company_id, Card.id)
        .having(func.sum(LedgerBalance.posted - LedgerBalance.pending_debits) > 0)
        .order_by(Card.company_id, Card.id)
    )
    if company_id is not None:
        stmt = stmt.where(Card.company_id == company_id)
    return [(int(c), int(i)) for c, i in (await session.execute(stmt)).all()]


# ------------------------------------------------------------------------- crypto custody


async def companies_with_crypto(session: AsyncSession) -> list[int]:
    """Companies whose coins a crypto rail may hold: a deposit arrived, or a crypto transfer
    was made (a card-provider funding leaves its fee in custody without any deposit)."""
    deposits = select(CryptoDeposit.company_id).distinct()
    transfers = select(CryptoTransfer.company_id).distinct()
    found = {int(i) for i in (await session.execute(deposits)).scalars()}
    found.update(int(i) for i in (await session.execute(transfers)).scalars())
    return sorted(found)


async def has_crypto(session: AsyncSession, *, company_id: int) -> bool:
    """Whether the company ever had a crypto deposit or transfer (its rail may hold coins)."""
    for column in (CryptoDeposit.company_id, CryptoTransfer.company_id):
        stmt = select(column).where(column == company_id).limit(1)
        if (await session.execute(stmt)).first() is not None:
            return True
    return False


async def deposits_not_credited(
    session: AsyncSession, *, company_id: int, currencies: Sequence[str]
) -> list[CryptoDeposit]:
    """The company's deposits in a stablecoin the rail holds and the ledger has not credited:
    waiting for finality (`PENDING`) or kept for return (`UNSUPPORTED`)."""
    stmt = select(CryptoDeposit).where(
        CryptoDeposit.company_id == company_id,
        CryptoDeposit.currency.in_(list(currencies)),
        CryptoDeposit.status.in_([DepositStatus.PENDING.value, DepositStatus.UNSUPPORTED.value]),
    )
    return list((await session.execute(stmt)).scalars())


async def auto_topup_conversions(session: AsyncSession, *, company_id: int) -> dict[str, int]:
    """Per stablecoin, the USD minor units of deposits the auto top-up converted in the ledger
    and did not undo (`CONVERTED`, `TOPPED_UP`)."""
    stmt = (
        select(CryptoDeposit.currency, func.sum(CryptoDeposit.auto_topup_amount_minor))
        .where(
            CryptoDeposit.company_id == company_id,
            CryptoDeposit.auto_topup_status.in_([topups.CONVERTED, topups.TOPPED_UP]),
        )
        .group_by(CryptoDeposit.currency)
    )
    return {str(c): int(a or 0) for c, a in (await session.execute(stmt)).all()}
