from __future__ import annotations

from datetime import datetime

from sqlalchemy import update

from finplat.crypto.cardprov.models import CardProviderQuote, CardQuoteStatus
from finplat.db.repository import CompanyRepository


class CardProviderQuoteRepository(CompanyRepository[CardProviderQuote]):
    model = CardProviderQuote

    async def find(self, quote_id: str) -> CardProviderQuote | None:
        stmt = (
            self.scoped()
            .where(CardProviderQuote.id == quote_id)
            .execution_options(populate_existing=True)
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def decide(
        self, quote_id: str, *, status: CardQuoteStatus, transfer_id: str | None, now: datetime
    ) -> bool:
        """OPEN -> `status` while the quote is valid; only one caller can win (a concurrent
        UPDATE waits for the winner's row lock, then re-checks the condition)."""
        result = await self.session.execute(
            update(CardProviderQuote)
            .where(
                CardProviderQuote.company_id == self.company_id,
                CardProviderQuote.id == quote_id,
                CardProviderQuote.status == CardQuoteStatus.OPEN.value,
                CardProviderQuote.expires_at > now,
            )
            .values(status=status.value, decided_at=now, transfer_id=transfer_id, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        return bool(result.rowcount == 1)  # type: ignore[attr-defined]
