"""Sandbox card programme: one class, instantiated once per issuing provider (card provider,
switch provider, banking provider), each with its own BIN.

* Issuing answers PENDING; the provider produces the card at once and reports it with a
  `card.status_changed` callback: ACTIVE for a virtual card, INACTIVE for a physical one (the
  holder activates it after delivery).
* The full card number and CVV are never stored: they are derived from an HMAC of the sandbox
  secret and the card id (number = BIN + digits + Luhn check digit, 16 digits; CVV 3 digits)
  and shown only on the provider's widget page, behind a single-use, short-lived token.
* The PIN is kept as a salted hash only.
* Auto-lock: with it on, an approved purchase locks the card; purchases are then declined
  with `AUTO_LOCKED` until the holder unlocks it (unfreeze) or turns auto-lock off.
* Loads and unloads are keyed by the caller's idempotency key (a repeat returns the first
  answer); the balance never goes below zero. They are answered, not reported: the caller
  learns the outcome from the answer or, after a lost answer, by key (`movement_by_key`), so
  no `card.transaction` callback repeats it. Loads also come in bulk (`load_many`).
* Transaction timestamps come in the provider's mixed formats: ISO 8601 for loads, Unix
  seconds for unloads, Unix milliseconds for purchases, none for declines.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import timedelta
from typing import Protocol

from sqlalchemy import bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db import driver_statements, prepared
from finplat.db.dialect import create_unless_taken
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.cards.port import (
    CARD_STATUS_CHANGED,
    CARD_TRANSACTION,
    CardAction,
    CardFundsShort,
    CardMovement,
    CardUnknownAtProvider,
    DeliveryAddress,
    LoadOrder,
    ProviderCard,
    ProviderCardStatus,
    ProviderCardTransaction,
    ShippingQuote,
    WidgetSession,
)
from finplat.providers.cards.sandbox import bulk_loads, movements
from finplat.providers.cards.sandbox.models import (
    SandboxCardprovCard,
    SandboxCardprovMovement,
    SandboxCardprovTransaction,
    SandboxCardprovWidgetToken,
)
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

OPERATIONS = (
    "issue_card",
    "card",
    "list_cards",
    "change_status",
    "set_pin",
    "set_auto_lock",
    "load",
    "unload",
    "widget",
    "card_transactions",
    "shipping_quote",
    "ship",
    "authorize",
)
WIDGET_PATH = "/sandbox/cards/widget"
EXPIRY_YEARS = 3
# Production and mailing fees of a physical card, in minor units of USD, by destination.
PRODUCTION_FEE_MINOR = 500
MAILING_FEE_MINOR = {"domestic": 300, "international": 1200}
DOMESTIC_COUNTRIES = frozenset({"GB", "US"})

S = ProviderCardStatus
# Which status each action moves a card to, from which statuses.
TRANSITIONS: dict[CardAction, tuple[frozenset[str], ProviderCardStatus]] = {
    CardAction.FREEZE: (frozenset({S.ACTIVE, S.FROZEN}), S.FROZEN),
    CardAction.UNFREEZE: (frozenset({S.ACTIVE, S.FROZEN}), S.ACTIVE),
    CardAction.ACTIVATE: (frozenset({S.INACTIVE, S.ACTIVE}), S.ACTIVE),
    CardAction.BLOCK: (frozenset({S.ACTIVE, S.FROZEN, S.BLOCKED, S.INACTIVE}), S.BLOCKED),
    CardAction.UNBLOCK: (frozenset({S.BLOCKED, S.ACTIVE}), S.ACTIVE),
    CardAction.CANCEL: (frozenset(set(S) - {S.CANCELLED}) | {S.CANCELLED}, S.CANCELLED),
}


class CardStateRefused(ProviderRejected):
    status = 409
    code = "PROVIDER_CARD_STATE"
    message = "The card provider refused the operation in the card's current status."


class InvalidWidgetToken(Exception):
    """Unknown, expired or already used."""


def luhn_check_digit(digits: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# The simulator's reads of a card (each card operation) and of a holder's cards (each card
# listing), built once: a simulator should cost a fraction of the request it serves.
_CARD = select(SandboxCardprovCard).where(
    SandboxCardprovCard.card_id == bindparam("card_id"),
    SandboxCardprovCard.company_id == bindparam("company_id"),
    SandboxCardprovCard.provider == bindparam("provider"),
)
_CARD_ROW = {False: _CARD, True: _CARD.with_for_update()}
_CARD_BY_KEY = select(SandboxCardprovCard).where(
    SandboxCardprovCard.idempotency_key == bindparam("key")
)
_HOLDERS_CARDS = (
    select(SandboxCardprovCard)
    .where(
        SandboxCardprovCard.company_id == bindparam("company_id"),
        SandboxCardprovCard.provider == bindparam("provider"),
        SandboxCardprovCard.holder_account_id == bindparam("holder_account_id"),
        SandboxCardprovCard.hidden.is_(False),
    )
    .order_by(SandboxCardprovCard.id)
)


class SandboxCardProgram:
    def __init__(
        self,
        factory: async_sessionmaker[AsyncSession],
        *,
        provider: str,
        bin_prefix: str,
        secret: str,
        latency_ms: int = 0,
    ) -> None:
        assert len(bin_prefix) == 6
        assert bin_prefix.isdigit()
        self.name = provider
        self.factory = factory
        self.bin_prefix = bin_prefix
        self._secret = secret.encode()
        self.sim = Simulator(factory, provider=provider, latency_ms=latency_ms)

    # ------------------------------------------------------------------ card data (derived)

    def _digest(self, label: str, card_id: str) -> int:
        mac = hmac.new(self._secret, f"{label}:{card_id}".encode(), hashlib.sha256)
        return int(mac.hexdigest(), 16)

    def full_number(self, card_id: str) -> str:
        body = self.bin_prefix + f"{self._digest('pan', card_id) % 10**9:09d}"
        return body + luhn_check_digit(body)

    def cvv(self, card_id: str) -> str:
        return f"{self._digest('cvv', card_id) % 1000:03d}"

    # ------------------------------------------------------------------------ helpers

    def _view(self, row: SandboxCardprovCard, status: str | None = None) -> ProviderCard:
        return ProviderCard(
            card_id=row.card_id,
            status=ProviderCardStatus(status or row.status),
            card_type=row.card_type,
            currency=row.currency,
            masked_number=row.masked_number,
            last4=row.last4,
            expiry_month=row.expiry_month,
            expiry_year=row.expiry_year,
            balance_minor=row.balance_minor,
            auto_lock=row.auto_lock,
            created_at=row.created_at,
            updated_at=row.updated_at,
        )

    async def _row(
        self,
        session: AsyncSession,
        company_id: int,
        card_id: str,
        *,
        exposed: bool = True,
        lock: bool = False,
    ) -> SandboxCardprovCard:
        """The card's row; `lock` for a change decided on what the row holds, so that changes
        racing on one card apply one after the other, as at a real provider (a freeze that
        read ACTIVE must not land on the card a cancellation closed meanwhile)."""
        params = {"card_id": card_id, "company_id": company_id, "provider": self.name}
        row = (await session.execute(_CARD_ROW[lock], params)).scalar_one_or_none()
        if row is None or (exposed and row.hidden):
            raise CardUnknownAtProvider()
        return row

    async def _record_transaction(
        self,
        session: AsyncSession,
        row: _CardHeld,
        *,
        type_: str,
        status: str,
        amount_minor: int,
        merchant: str | None = None,
        decline_reason: str | None = None,
        timestamp: str | None,
        report: bool = True,
        authorization_id: str | None = None,
        extra: dict[str, object] | None = None,
    ) -> ProviderCardTransaction:
        view = ProviderCardTransaction(
            transaction_id=f"{self.name}_txn_{uuid.uuid4().hex[:24]}",
            type=type_,
            status=status,
            amount_minor=amount_minor,
            currency=row.currency,
            merchant=merchant,
            decline_reason=decline_reason,
            timestamp=_reported_timestamp(timestamp),
            authorization_id=authorization_id,
        )
        await driver_statements.execute(
            await driver_statements.connection_of(session),
            movements.RECORD_TRANSACTION,
            {
                "company_id": row.company_id,
                "provider": self.name,
                "transaction_id": view.transaction_id,
                "card_id": row.card_id,
                "authorization_id": authorization_id,
                "type": type_,
                "status": status,
                "amount_minor": amount_minor,
                "currency": row.currency,
                "merchant": merchant,
                "decline_reason": decline_reason,
                "timestamp": timestamp,
            },
        )
        if report:
            await self.sim.emit_callback(
                session,
                company_id=row.company_id,
                type_=CARD_TRANSACTION,
                data=_callback_data(view, row.card_id) | (extra or {}),
            )
        return view

    # --------------------------------------------------------------------------- port

    async def issue_card(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        holder_account_id: str,
        card_type: str,
        currency: str,
        nickname: str | None,
        budget_id: str | None,
        delivery_address: DeliveryAddress | None,
        design_id: str | None,
    ) -> ProviderCard:
        mode = await self.sim.enter(company_id, "issue_card")
        async with unit_of_work(self.factory) as session:
            now = utcnow()
            card_id = f"{self.name}_card_{uuid.uuid4().hex[:20]}"
            number = self.full_number(card_id)
            key = f"{self.name}:{company_id}:{idempotency_key}"
            # Produced at once: written in its produced status, answered as issued (PENDING),
            # its production reported by the callback.
            produced = S.ACTIVE if card_type == "VIRTUAL" else S.INACTIVE
            values = {
                "company_id": company_id,
                "provider": self.name,
                "card_id": card_id,
                "idempotency_key": key,
                "holder_account_id": holder_account_id,
                "card_type": card_type,
                "currency": currency,
                "nickname": nickname,
                "budget_id": budget_id,
                "design_id": design_id,
                "delivery_address": (
                    json.dumps(asdict(delivery_address)) if delivery_address else None
                ),
                "status": produced.value,
                "masked_number": f"{number[:6]}******{number[-4:]}",
                "last4": number[-4:],
                "expiry_month": now.month,
                "expiry_year": now.year + EXPIRY_YEARS,
                "balance_minor": 0,
                "created_at": now,
                "updated_at": now,
            }
            row = await create_unless_taken(session, SandboxCardprovCard, values)
            if row is None:  # issued before under this key: that card, as it is now
                row = (await session.execute(_CARD_BY_KEY, {"key": key})).scalar_one()
                answer = self._view(row)
            else:
                answer = self._view(row, S.PENDING.value)
                await self.sim.emit_callback(
                    session,
                    company_id=company_id,
                    type_=CARD_STATUS_CHANGED,
                    data={"cardId": card_id, "status": produced.value, "reason": "produced"},
                )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def card(self, *, company_id: int, card_id: str) -> ProviderCard:
        await self.sim.enter(company_id, "card")
        async with unit_of_work(self.factory) as session:
            return self._view(await self._row(session, company_id, card_id))

    async def list_cards(self, *, company_id: int, holder_account_id: str) -> list[ProviderCard]:
        await self.sim.enter(company_id, "list_cards")
        async with unit_of_work(self.factory) as session:
            params = {
                "company_id": company_id,
                "provider": self.name,
                "holder_account_id": holder_account_id,
            }
            found = await session.execute(_HOLDERS_CARDS, params)
            return [self._view(r) for r in found.scalars()]

    async def change_status(
        self, *, company_id: int, card_id: str, action: CardAction
    ) -> ProviderCard:
        mode = await self.sim.enter(company_id, "change_status")
        async with unit_of_work(self.factory) as session:
            # Cancelling again answers CANCELLED: a caller whose first answer was lost must
            # be able to learn that the card is cancelled.
            row = await self._row(
                session, company_id, card_id, exposed=action is not CardAction.CANCEL, lock=True
            )
            allowed, target = TRANSITIONS[action]
            if row.status not in allowed:
                raise CardStateRefused(
                    f"The card provider cannot {action.value} a card in status {row.status}."
                )
            if action is CardAction.UNFREEZE and row.locked:
                row.locked = False  # the holder unlocks an auto-locked card
                row.updated_at = utcnow()
                await session.flush()
            if row.status != target.value:
                row.status = target.value
                row.updated_at = utcnow()
                if target is S.CANCELLED:
                    # The provider stops exposing cancelled cards.
                    row.hidden = True
                    row.balance_minor = 0  # back to the programme's funds
                await session.flush()
            answer = self._view(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def set_pin(self, *, company_id: int, card_id: str, pin: str) -> None:
        await self.sim.enter(company_id, "set_pin")
        async with unit_of_work(self.factory) as session:
            row = await self._row(session, company_id, card_id, lock=True)
            if row.status == S.CANCELLED.value:
                raise CardStateRefused("The card provider cannot set the PIN of a cancelled card.")
            salt = secrets.token_bytes(16)
            digest = hashlib.scrypt(pin.encode(), salt=salt, n=2**12, r=8, p=1, dklen=32)
            row.pin_hash = f"{salt.hex()}${digest.hex()}"
            row.updated_at = utcnow()
            await session.flush()

    async def set_auto_lock(self, *, company_id: int, card_id: str, enabled: bool) -> ProviderCard:
        mode = await self.sim.enter(company_id, "set_auto_lock")
        async with unit_of_work(self.factory) as session:
            row = await self._row(session, company_id, card_id, lock=True)
            if row.status == S.CANCELLED.value:
                raise CardStateRefused("The card provider cannot change a cancelled card.")
            if row.auto_lock != enabled or (not enabled and row.locked):
                row.auto_lock = enabled
                if not enabled:
                    row.locked = False
                row.updated_at = utcnow()
                await session.flush()
            answer = self._view(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def load(
        self, *, company_id: int, card_id: str, idempotency_key: str, amount_minor: int
    ) -> CardMovement:
        return await self._move("load", company_id, card_id, idempotency_key, amount_minor)

    async def unload(
        self, *, company_id: int, card_id: str, idempotency_key: str, amount_minor: int
    ) -> CardMovement:
        return await self._move("unload", company_id, card_id, idempotency_key, -amount_minor)

    async def _move(
        self, operation: str, company_id: int, card_id: str, key: str, signed_minor: int
    ) -> CardMovement:
        mode = await self.sim.enter(company_id, operation)
        if signed_minor == 0:
            raise ProviderRejected("The amount must not be zero.", status=400)
        scoped = bulk_loads.scoped_key(self.name, company_id, key)
        async with unit_of_work(self.factory) as session:
            movement_id = f"{self.name}_mov_{uuid.uuid4().hex[:24]}"
            connection = await driver_statements.connection_of(session)
            inserted = await driver_statements.execute(
                connection,
                movements.INSERT[connection.dialect.name],
                {
                    "company_id": company_id,
                    "provider": self.name,
                    "movement_id": movement_id,
                    "idempotency_key": scoped,
                    "card_id": card_id,
                    "amount_minor": signed_minor,
                    "balance_minor": 0,
                    "status": "COMPLETED",
                    "created_at": utcnow(),
                },
            )
            if not inserted:
                found = await self._movement(session, scoped)
                assert found is not None
                answer = found
            else:
                # One conditional UPDATE; only when it changes nothing is the card read, to
                # say why.
                moved = await session.execute(
                    movements.MOVE_CARD,
                    {
                        "m_card_id": card_id,
                        "m_company_id": company_id,
                        "m_provider": self.name,
                        "m_amount": signed_minor,
                        "m_now": utcnow(),
                    },
                )
                row = moved.one_or_none()
                if row is None:
                    current = await self._row(session, company_id, card_id)
                    if current.status in (S.CANCELLED.value, S.PENDING.value):
                        raise CardStateRefused(
                            f"The card provider cannot {operation} a card in status "
                            f"{current.status}."
                        )
                    raise CardFundsShort()
                balance = row.balance_minor
                await driver_statements.execute(
                    connection,
                    movements.SET_BALANCE,
                    {"m_movement_id": movement_id, "m_balance": balance},
                )
                now = utcnow()
                await self._record_transaction(
                    session,
                    row,
                    type_="LOAD" if signed_minor > 0 else "UNLOAD",
                    status="SETTLED",
                    amount_minor=abs(signed_minor),
                    timestamp=(now.isoformat() if signed_minor > 0 else str(int(now.timestamp()))),
                    report=False,  # the caller has the answer (see the module docstring)
                )
                answer = CardMovement(movement_id, "COMPLETED", abs(signed_minor), balance)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def _movement(self, session: AsyncSession, scoped_key: str) -> CardMovement | None:
        stmt = select(SandboxCardprovMovement).where(
            SandboxCardprovMovement.idempotency_key == scoped_key
        )
        row = (await session.execute(stmt)).scalar_one_or_none()
        if row is None:
            return None
        return CardMovement(row.movement_id, row.status, abs(row.amount_minor), row.balance_minor)

    async def movement_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> CardMovement | None:
        async with unit_of_work(self.factory) as session:
            scoped = bulk_loads.scoped_key(self.name, company_id, idempotency_key)
            return await self._movement(session, scoped)

    async def load_many(self, orders: Sequence[LoadOrder]) -> list[CardMovement | None]:
        """One bulk call (the simulated latency once) making in one transaction the loads
        `load` would simply make (`bulk_loads`); the rest is left to `load`. Bulk
        loads need PostgreSQL: on SQLite every order is left to `load`."""
        if self.sim.latency_ms:
            await asyncio.sleep(self.sim.latency_ms / 1000)
        if not prepared.serves(self.factory):
            return [None] * len(orders)
        async with prepared.connection(self.factory) as pg:
            return await bulk_loads.make(pg, provider=self.name, orders=orders)

    async def widget(
        self, *, company_id: int, card_id: str, ttl_seconds: int, base_url: str = ""
    ) -> WidgetSession:
        await self.sim.enter(company_id, "widget")
        token = f"sbx_widget_{secrets.token_urlsafe(32)}"
        expires_at = utcnow() + timedelta(seconds=ttl_seconds)
        async with unit_of_work(self.factory) as session:
            row = await self._row(session, company_id, card_id)
            if row.status in (S.CANCELLED.value, S.PENDING.value):
                raise CardStateRefused(f"No card details to show in status {row.status}.")
            session.add(
                SandboxCardprovWidgetToken(
                    company_id=company_id,
                    provider=self.name,
                    token_hash=token_hash(token),
                    card_id=card_id,
                    expires_at=expires_at,
                )
            )
            await session.flush()
        # The token travels in the fragment: browsers never send it, so no log keeps it.
        return WidgetSession(f"{base_url.rstrip('/')}{WIDGET_PATH}#token={token}", expires_at)

    async def reveal(self, token: str) -> dict[str, str]:
        """The widget page's one use of its token: the full card details, once."""
        async with unit_of_work(self.factory) as session:
            stmt = select(SandboxCardprovWidgetToken).where(
                SandboxCardprovWidgetToken.token_hash == token_hash(token),
                SandboxCardprovWidgetToken.provider == self.name,
                SandboxCardprovWidgetToken.used_at.is_(None),
                SandboxCardprovWidgetToken.expires_at > utcnow(),
            )
            live = (await session.execute(stmt)).scalar_one_or_none()
            if live is None:
                raise InvalidWidgetToken()
            used = await session.execute(
                update(SandboxCardprovWidgetToken)
                .where(
                    SandboxCardprovWidgetToken.id == live.id,
                    SandboxCardprovWidgetToken.used_at.is_(None),
                )
                .values(used_at=utcnow())
            )
            if not getattr(used, "rowcount", 0):
                raise InvalidWidgetToken()
            row = await self._row(session, live.company_id, live.card_id)
            return {
                "number": self.full_number(row.card_id),
                "expiry": f"{row.expiry_month:02d}/{row.expiry_year % 100:02d}",
                "cvv": self.cvv(row.card_id),
            }

    async def transactions(self, *, company_id: int, card_id: str) -> list[ProviderCardTransaction]:
        await self.sim.enter(company_id, "card_transactions")
        async with unit_of_work(self.factory) as session:
            await self._row(session, company_id, card_id)
            stmt = (
                select(SandboxCardprovTransaction)
                .where(
                    SandboxCardprovTransaction.company_id == company_id,
                    SandboxCardprovTransaction.card_id == card_id,
                )
                .order_by(SandboxCardprovTransaction.id.desc())
            )
            return [_transaction_view(t) for t in (await session.execute(stmt)).scalars()]

    async def shipping_quote(
        self, *, company_id: int, country: str, card_type: str
    ) -> ShippingQuote:
        await self.sim.enter(company_id, "shipping_quote")
        if card_type != "PHYSICAL":
            raise ProviderRejected("Only physical cards are shipped.", status=409)
        zone = "domestic" if country.upper() in DOMESTIC_COUNTRIES else "international"
        return ShippingQuote(PRODUCTION_FEE_MINOR, MAILING_FEE_MINOR[zone], "USD")

    async def ship(
        self, *, company_id: int, card_id: str, idempotency_key: str, address: DeliveryAddress
    ) -> ProviderCard:
        mode = await self.sim.enter(company_id, "ship")
        async with unit_of_work(self.factory) as session:
            row = await self._row(session, company_id, card_id, lock=True)
            if row.card_type != "PHYSICAL" or row.status == S.CANCELLED.value:
                raise CardStateRefused("Only a physical, non-cancelled card can be shipped.")
            if not row.shipped:
                row.shipped = True
                row.delivery_address = json.dumps(asdict(address))
                row.updated_at = utcnow()
                await session.flush()
            answer = self._view(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    # ----------------------------------------------------------------- simulation

    def new_authorization_id(self) -> str:
        return f"{self.name}_auth_{uuid.uuid4().hex[:24]}"

    async def authorize(
        self,
        *,
        company_id: int,
        card_id: str,
        authorization_id: str,
        amount_minor: int,
        currency: str,
        merchant: str,
        mcc: str | None = None,
        country: str | None = None,
        platform_decline: str | None = None,
        just_in_time: bool = False,
        mid: str | None = None,
    ) -> ProviderCardTransaction:
        await self.sim.enter(company_id, "authorize")
        extra: dict[str, object] = {"mcc": mcc, "country": country, "mid": mid}
        async with unit_of_work(self.factory) as session:
            # A merchant can still present a cancelled card: it is declined, `CARD_CANCELLED`.
            row = await self._row(session, company_id, card_id, exposed=False, lock=True)
            reason = platform_decline or _refusal(row, currency)
            if reason is None and just_in_time:
                row.locked = row.auto_lock
            elif reason is None:
                moved = await session.execute(
                    movements.SPEND, {"a_row_id": row.id, "a_amount": amount_minor}
                )
                if moved.scalar_one_or_none() is None:
                    reason = "INSUFFICIENT_FUNDS"
            if reason is not None:
                return await self._record_transaction(
                    session,
                    row,
                    type_="DECLINE",
                    status="DECLINED",
                    amount_minor=amount_minor,
                    merchant=merchant,
                    decline_reason=reason,
                    timestamp=None,
                    authorization_id=authorization_id,
                    extra=extra,
                )
            return await self._record_transaction(
                session,
                row,
                type_="AUTHORIZATION",
                status="PENDING",
                amount_minor=amount_minor,
                merchant=merchant,
                timestamp=str(int(utcnow().timestamp() * 1000)),
                authorization_id=authorization_id,
                extra=extra,
            )

    async def purchase_event(
        self,
        *,
        company_id: int,
        card_id: str,
        authorization_id: str,
        type_: str,
        amount_minor: int | None,
        just_in_time: bool = False,
    ) -> ProviderCardTransaction:
        await self.sim.enter(company_id, "authorize")
        async with unit_of_work(self.factory) as session:
            row = await self._row(session, company_id, card_id, exposed=False, lock=True)
            stmt = select(SandboxCardprovTransaction).where(
                SandboxCardprovTransaction.company_id == company_id,
                SandboxCardprovTransaction.card_id == card_id,
                SandboxCardprovTransaction.authorization_id == authorization_id,
            )
            events = list((await session.execute(stmt)).scalars())
            if not events:
                raise ProviderRejected("No such authorization on the card.", status=404)
            before = _Purchase.of(events)
            if before.declined:
                raise CardStateRefused("A declined authorization takes no further event.")
            amount = amount_minor if amount_minor is not None else before.hold
            if amount <= 0:
                raise CardStateRefused("The authorization holds nothing to clear or reverse.")
            after = before.plus(type_, amount)
            # What the card can spend moves by the hold released and the money paid.
            delta = 0 if just_in_time else (before.hold - after.hold) + (before.paid - after.paid)
            if row.balance_minor + delta < 0:
                raise CardStateRefused("The card's balance does not cover the clearing.")
            row.balance_minor += delta
            row.updated_at = utcnow()
            first = events[0]
            return await self._record_transaction(
                session,
                row,
                type_=type_,
                status="SETTLED" if type_ in ("CLEARING", "REFUND") else "PENDING",
                amount_minor=amount,
                merchant=first.merchant,
                timestamp=str(int(utcnow().timestamp() * 1000)),
                authorization_id=authorization_id,
            )

    async def cancel_on_its_own(self, *, company_id: int, card_id: str) -> ProviderCard:
        async with unit_of_work(self.factory) as session:
            row = await self._row(session, company_id, card_id, lock=True)
            if row.status in (S.CANCELLED.value, S.PENDING.value):
                raise CardStateRefused(
                    f"The card provider cannot cancel a card in status {row.status}."
                )
            row.status = S.CANCELLED.value
            row.hidden = True  # the provider stops exposing cancelled cards
            row.balance_minor = 0  # back to the programme's funds
            row.updated_at = utcnow()
            await session.flush()
            await self.sim.emit_callback(
                session,
                company_id=company_id,
                type_=CARD_STATUS_CHANGED,
                data={"cardId": card_id, "status": S.CANCELLED.value, "reason": "provider"},
            )
            return self._view(row)


def _refusal(row: SandboxCardprovCard, currency: str) -> str | None:
    """Why the provider itself declines a purchase on the card, if it does."""
    if row.status != S.ACTIVE.value:
        return f"CARD_{row.status}"
    if row.locked:
        return "AUTO_LOCKED"
    if currency != row.currency:
        return "CURRENCY_NOT_SUPPORTED"
    return None


@dataclass(frozen=True)
class _Purchase:
    """The provider's own account of one purchase, from its events (as the platform's)."""

    authorized: int = 0
    reversed: int = 0
    cleared: int = 0
    refunded: int = 0
    declined: bool = False

    @classmethod
    def of(cls, events: Sequence[SandboxCardprovTransaction]) -> _Purchase:
        state = cls()
        for event in events:
            state = state.plus(event.type, event.amount_minor)
        return state

    def plus(self, type_: str, amount: int) -> _Purchase:
        if type_ in ("AUTHORIZATION", "INCREMENTAL"):
            return replace(self, authorized=self.authorized + amount)
        if type_ == "REVERSAL":
            return replace(self, reversed=self.reversed + amount)
        if type_ == "CLEARING":
            return replace(self, cleared=self.cleared + amount)
        if type_ == "REFUND":
            return replace(self, refunded=self.refunded + amount)
        if type_ == "DECLINE":
            return replace(self, declined=True)
        return self

    @property
    def hold(self) -> int:
        if self.cleared or self.declined:
            return 0
        return max(0, self.authorized - self.reversed)

    @property
    def paid(self) -> int:
        return self.cleared - self.refunded


class _CardHeld(Protocol):
    """What a transaction takes from its card: the card's row, or the columns an UPDATE of
    it returned."""

    @property
    def company_id(self) -> int: ...

    @property
    def card_id(self) -> str: ...

    @property
    def currency(self) -> str: ...


def _reported_timestamp(stored: str | None) -> str | int | None:
    """A transaction's time as the provider reports it: epoch seconds as a number."""
    if stored is not None and stored.isdigit():
        return int(stored)
    return stored


def _transaction_view(row: SandboxCardprovTransaction) -> ProviderCardTransaction:
    return ProviderCardTransaction(
        transaction_id=row.transaction_id,
        type=row.type,
        status=row.status,
        amount_minor=row.amount_minor,
        currency=row.currency,
        merchant=row.merchant,
        decline_reason=row.decline_reason,
        timestamp=_reported_timestamp(row.timestamp),
        authorization_id=row.authorization_id,
    )


def _callback_data(txn: ProviderCardTransaction, card_id: str) -> dict[str, object]:
    return {
        "cardId": card_id,
        "transactionId": txn.transaction_id,
        "type": txn.type,
        "status": txn.status,
        "amountMinor": txn.amount_minor,
        "currency": txn.currency,
        "merchant": txn.merchant,
        "declineReason": txn.decline_reason,
        "timestamp": txn.timestamp,
        "authorizationId": txn.authorization_id,
    }
