"""Card-provider quotes (`cpq_...`): fiat of a banking-provider budget priced in USDC
delivered to the user's deposit address at the card provider, or the reverse, for a short
time. A quote is decided at most once (the funds decision): approved, it starts the transfer;
declined, it is closed. Deciding moves it from `OPEN` with one conditional UPDATE, so parallel
decisions cannot both pass."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId, CompanyOwned, Timestamped


class Direction(StrEnum):
    BANKPROV_TO_CARDPROV = "BANKPROV_TO_CARDPROV"
    CARDPROV_TO_BANKPROV = "CARDPROV_TO_BANKPROV"


class CardQuoteStatus(StrEnum):
    OPEN = "OPEN"
    APPROVED = "APPROVED"
    DECLINED = "DECLINED"


class CardProviderQuote(CompanyOwned, Timestamped, Base):
    __tablename__ = "crypto_cardprov_quotes"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        BigIntId, ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    direction: Mapped[str] = mapped_column(String(24))
    budget_id: Mapped[str] = mapped_column(
        String(32), ForeignKey("banking_budgets.id", ondelete="CASCADE")
    )
    card_id: Mapped[int] = mapped_column(BigIntId, ForeignKey("cards.id", ondelete="CASCADE"))
    fiat_currency: Mapped[str] = mapped_column(String(8))
    fiat_amount_minor: Mapped[int] = mapped_column(BigInteger)  # the budget's side
    currency: Mapped[str] = mapped_column(String(8))  # USDC
    amount_minor: Mapped[int] = mapped_column(BigInteger)  # the card provider's side, fee in
    fee_minor: Mapped[int] = mapped_column(BigInteger)  # in `currency`
    rate: Mapped[str] = mapped_column(String(32))  # `currency` units per fiat unit
    expires_at: Mapped[datetime] = mapped_column()
    status: Mapped[str] = mapped_column(String(16), default=CardQuoteStatus.OPEN.value)
    decided_at: Mapped[datetime | None] = mapped_column(default=None)
    transfer_id: Mapped[str | None] = mapped_column(String(32), default=None)
    # CARDPROV_TO_BANKPROV only: the USD unloaded from the card and the unload fee priced.
    card_amount_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
    card_fee_minor: Mapped[int | None] = mapped_column(BigInteger, default=None)
