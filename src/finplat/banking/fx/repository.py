from __future__ import annotations

from datetime import datetime

from sqlalchemy import update

from finplat.banking.fx.models import BankingFxQuote, QuoteStatus
from finplat.db.repository import CompanyRepository


class QuoteRepository(CompanyRepository[BankingFxQuote]):
    model = BankingFxQuote

    async def find(self, quote_id: str) -> BankingFxQuote | None:
        stmt = self.scoped().where(BankingFxQuote.id == quote_id)
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def reload(self, quote_id: str) -> BankingFxQuote | None:
        stmt = (
            self.scoped()
            .where(BankingFxQuote.id == quote_id)
            .execution_options(populate_existing=True)
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def claim(self, quote_id: str, *, now: datetime) -> bool:
        """OPEN -> EXECUTED if the quote is still valid; only one caller can win (the row
        lock makes a concurrent UPDATE re-check the condition after the winner commits)."""
        result = await self.session.execute(
            update(BankingFxQuote)
            .where(
                BankingFxQuote.company_id == self.company_id,
                BankingFxQuote.id == quote_id,
                BankingFxQuote.status == QuoteStatus.OPEN.value,
                BankingFxQuote.expires_at > now,
            )
            .values(status=QuoteStatus.EXECUTED.value, executed_at=now, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]

    async def link_transaction(self, quote_id: str, transaction_id: int) -> None:
        await self.session.execute(
            update(BankingFxQuote)
            .where(BankingFxQuote.company_id == self.company_id, BankingFxQuote.id == quote_id)
            .values(transaction_id=transaction_id)
            .execution_options(synchronize_session=False)
        )

    async def reopen(self, quote_id: str, *, transaction_id: int, now: datetime) -> None:
        """Give the quote back after the provider refused this execution (it executed
        nothing), unless another execution holds it."""
        await self.session.execute(
            update(BankingFxQuote)
            .where(
                BankingFxQuote.company_id == self.company_id,
                BankingFxQuote.id == quote_id,
                BankingFxQuote.status == QuoteStatus.EXECUTED.value,
                BankingFxQuote.transaction_id == transaction_id,
            )
            .values(
                status=QuoteStatus.OPEN.value,
                executed_at=None,
                transaction_id=None,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
