from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm.attributes import set_committed_value

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

    async def claim(self, quote: BankingFxQuote, *, now: datetime) -> bool:
        """OPEN -> EXECUTED if the quote is still valid; only one caller can win (the row
        lock makes a concurrent UPDATE re-check the condition after the winner commits). The
        winner's object shows what was written, without a read."""
        values = {"status": QuoteStatus.EXECUTED.value, "executed_at": now, "updated_at": now}
        result = await self.session.execute(
            update(BankingFxQuote)
            .where(
                BankingFxQuote.company_id == self.company_id,
                BankingFxQuote.id == quote.id,
                BankingFxQuote.status == QuoteStatus.OPEN.value,
                BankingFxQuote.expires_at > now,
            )
            .values(values)
            .execution_options(synchronize_session=False)
        )
        if result.rowcount != 1:  # type: ignore[attr-defined]
            return False
        _reflect(quote, values)
        return True

    async def link_transaction(self, quote: BankingFxQuote, transaction_id: int) -> None:
        values = {"transaction_id": transaction_id}
        await self.session.execute(
            update(BankingFxQuote)
            .where(BankingFxQuote.company_id == self.company_id, BankingFxQuote.id == quote.id)
            .values(values)
            .execution_options(synchronize_session=False)
        )
        _reflect(quote, values)

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


def _reflect(quote: BankingFxQuote, written: dict[str, Any]) -> None:
    """The values an UPDATE by statement wrote, set on the session's object as committed
    state (no change left to flush)."""
    for name, value in written.items():
        set_committed_value(quote, name, value)
