"""The sandbox card programme's own state, as an outside card issuer would keep it: its cards
(balance, status, a PIN hash), the money loaded onto or taken off them, their transactions and
the widget tokens. Never the full card number or CVV: the sandbox derives them from a secret
and the card id each time its widget page shows them."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, CheckConstraint, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from finplat.db.base import Base, BigIntId
from finplat.kit.clock import utcnow


class SandboxCardprovCard(Base):
    __tablename__ = "sandbox_cardprov_cards"
    __table_args__ = (
        CheckConstraint("balance_minor >= 0", name="not_negative"),
        # Room on each page, so that balance updates stay in place.
        {"postgresql_with": {"fillfactor": 70}},
    )

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    provider: Mapped[str] = mapped_column(String(16))
    card_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(160), unique=True)
    holder_account_id: Mapped[str] = mapped_column(String(64), index=True)
    card_type: Mapped[str] = mapped_column(String(16))
    currency: Mapped[str] = mapped_column(String(8))
    nickname: Mapped[str | None] = mapped_column(String(100), default=None)
    budget_id: Mapped[str | None] = mapped_column(String(64), default=None)
    design_id: Mapped[str | None] = mapped_column(String(64), default=None)
    delivery_address: Mapped[str | None] = mapped_column(Text, default=None)
    status: Mapped[str] = mapped_column(String(16))
    masked_number: Mapped[str] = mapped_column(String(19))
    last4: Mapped[str] = mapped_column(String(4))
    expiry_month: Mapped[int] = mapped_column(Integer)
    expiry_year: Mapped[int] = mapped_column(Integer)
    balance_minor: Mapped[int] = mapped_column(BigInteger, default=0)
    pin_hash: Mapped[str | None] = mapped_column(String(128), default=None)
    shipped: Mapped[bool] = mapped_column(Boolean, default=False)
    # Auto-lock: with it on, the card locks itself after each approved purchase and declines
    # purchases (`AUTO_LOCKED`) until the holder unlocks it.
    auto_lock: Mapped[bool] = mapped_column(Boolean, default=False)
    locked: Mapped[bool] = mapped_column(Boolean, default=False)
    # A cancelled card stops being exposed by the provider after this moment.
    hidden: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxCardprovMovement(Base):
    """A load or unload, keyed by the caller's idempotency key (found by it alone)."""

    __tablename__ = "sandbox_cardprov_movements"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    provider: Mapped[str] = mapped_column(String(16))
    movement_id: Mapped[str] = mapped_column(String(64), unique=True)
    idempotency_key: Mapped[str] = mapped_column(String(160), unique=True)
    card_id: Mapped[str] = mapped_column(String(64))
    amount_minor: Mapped[int] = mapped_column(BigInteger)  # signed: negative leaves the card
    balance_minor: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxCardprovTransaction(Base):
    __tablename__ = "sandbox_cardprov_transactions"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    provider: Mapped[str] = mapped_column(String(16))
    transaction_id: Mapped[str] = mapped_column(String(64), unique=True)
    card_id: Mapped[str] = mapped_column(String(64), index=True)
    # The purchase the event belongs to (none for loads and unloads).
    authorization_id: Mapped[str | None] = mapped_column(String(64), default=None, index=True)
    type: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    amount_minor: Mapped[int] = mapped_column(BigInteger)
    currency: Mapped[str] = mapped_column(String(8))
    merchant: Mapped[str | None] = mapped_column(String(100), default=None)
    decline_reason: Mapped[str | None] = mapped_column(String(64), default=None)
    # As the provider sends it: ISO 8601 text, Unix seconds or milliseconds (as text), or none.
    timestamp: Mapped[str | None] = mapped_column(String(40), default=None)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class SandboxCardprovWidgetToken(Base):
    """A single-use widget token (only its hash is kept)."""

    __tablename__ = "sandbox_cardprov_widget_tokens"

    id: Mapped[int] = mapped_column(BigIntId, primary_key=True, autoincrement=True)
    company_id: Mapped[int] = mapped_column(BigInteger)
    provider: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    card_id: Mapped[str] = mapped_column(String(64))
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column(default=None)
