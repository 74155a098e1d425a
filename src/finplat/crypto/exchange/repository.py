from __future__ import annotations

from datetime import datetime

from sqlalchemy import update

from finplat.crypto.exchange.models import CryptoExchangeQuote, QuoteStatus
from finplat.db.repository import CompanyRepository


class ExchangeQuoteRepository(CompanyRepository[CryptoExchangeQuote]):
    model = CryptoExchangeQuote

    async def find(self, quote_id: str) -> CryptoExchangeQuote | None:
        stmt = (
            self.scoped()
            .where(CryptoExchangeQuote.id == quote_id)
            .execution_options(populate_existing=True)
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def accept(self, quote_id: str, *, transfer_id: str, now: datetime) -> bool:
        """OPEN -> ACCEPTED while the quote is valid; only one caller can win (a concurrent
        UPDATE waits for the winner's row lock, then re-checks the condition)."""
        result = await self.session.execute(
            update(CryptoExchangeQuote)
            .where(
                CryptoExchangeQuote.company_id == self.company_id,
                CryptoExchangeQuote.id == quote_id,
                CryptoExchangeQuote.status == QuoteStatus.OPEN.value,
                CryptoExchangeQuote.expires_at > now,
            )
            .values(
                status=QuoteStatus.ACCEPTED.value,
                accepted_at=now,
                transfer_id=transfer_id,
                updated_at=now,
            )
            .execution_options(synchronize_session=False)
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]
