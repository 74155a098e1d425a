"""Sandbox banking provider: FX quotes and trades (mixed into the composed provider in
adapter.py).

Prices come from fixed mid rates against USD with a 0.25 % spread against the customer;
the computed amount is rounded in the provider's favour to its currency's minor unit (the
buy amount down, the sell amount up). Quotes are valid 30 seconds. A trade executes a quote
at most once: the trade row is unique per quote and per idempotency key, and it is written
in the same transaction as the balance movements, so either both happen or neither does.

Faults: `timeout` on `execute_trade` executes the trade and loses the answer; `pending`
accepts it (the sell amount leaves the budget) and completes it the next time its status is
asked (`trade_status`).
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from decimal import ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, Decimal
from typing import cast

from sqlalchemy import Table, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.dialect import create_unless_taken
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.kit.money import exponent
from finplat.providers.banking.port import FixedSide, ProviderQuote, ProviderTrade, TradeStatus
from finplat.providers.banking.sandbox.budgets import CurrencyNotHeld, SandboxBankingCore
from finplat.providers.banking.sandbox.models import SandboxBankprovFxQuote, SandboxBankprovFxTrade
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode

OPERATIONS: tuple[str, ...] = ("quote", "execute_trade", "trade_status")

# Mid-market value of one unit in USD.
MID_RATES_USD: dict[str, Decimal] = {
    "EUR": Decimal("1.08"),
    "GBP": Decimal("1.27"),
    "USD": Decimal(1),
    "USDC": Decimal(1),
    "USDT": Decimal(1),
}
SPREAD = Decimal("0.0025")
RATE_PLACES = Decimal("0.00000001")
QUOTE_LIFETIME = timedelta(seconds=30)


# A quote is written, never read back by its writer: an INSERT built once, not an ORM flush.
_NEW_QUOTE = insert(cast(Table, SandboxBankprovFxQuote.__table__))


class PairNotSupported(ProviderRejected):
    status = 400
    code = "PROVIDER_PAIR_NOT_SUPPORTED"
    message = "The banking provider does not trade this currency pair."


class AmountTooSmall(ProviderRejected):
    status = 400
    code = "PROVIDER_AMOUNT_TOO_SMALL"
    message = "The amount is too small to convert."


class QuoteUnknown(ProviderRejected):
    status = 404
    code = "PROVIDER_QUOTE_NOT_FOUND"
    message = "The banking provider has no such quote."


class QuoteExpiredAtProvider(ProviderRejected):
    status = 400
    code = "PROVIDER_QUOTE_EXPIRED"
    message = "The quote has expired; ask for a new one."


class QuoteAlreadyExecuted(ProviderRejected):
    status = 409
    code = "QUOTE_ALREADY_EXECUTED"
    message = "The quote was already executed."


class KeyReusedForAnotherQuote(ProviderRejected):
    status = 409
    code = "PROVIDER_IDEMPOTENCY_MISMATCH"
    message = "The provider already used this key for another quote."


def customer_rate(sell_currency: str, buy_currency: str) -> Decimal:
    """Buy-currency units for one sell-currency unit, spread included, rounded down."""
    if (
        sell_currency == buy_currency
        or sell_currency not in MID_RATES_USD
        or buy_currency not in MID_RATES_USD
    ):
        raise PairNotSupported()
    mid = MID_RATES_USD[sell_currency] / MID_RATES_USD[buy_currency]
    return (mid * (1 - SPREAD)).quantize(RATE_PLACES, rounding=ROUND_DOWN)


def price(
    sell_currency: str, buy_currency: str, amount_minor: int, fixed_side: FixedSide
) -> tuple[int, int, Decimal]:
    """(sell minor, buy minor, rate) for `amount_minor` of the fixed side's currency."""
    rate = customer_rate(sell_currency, buy_currency)
    scale = Decimal(10) ** (exponent(buy_currency) - exponent(sell_currency))
    if fixed_side is FixedSide.SELL:
        sell = amount_minor
        buy = int((Decimal(sell) * scale * rate).to_integral_value(rounding=ROUND_FLOOR))
    else:
        buy = amount_minor
        sell = int((Decimal(buy) / scale / rate).to_integral_value(rounding=ROUND_CEILING))
    if sell <= 0 or buy <= 0:
        raise AmountTooSmall()
    return sell, buy, rate


class SandboxFx(SandboxBankingCore):
    async def quote(
        self,
        *,
        company_id: int,
        budget_id: str,
        sell_currency: str,
        buy_currency: str,
        amount_minor: int,
        fixed_side: FixedSide,
    ) -> ProviderQuote:
        mode = await self.sim.enter(company_id, "quote")
        sell, buy, rate = price(sell_currency, buy_currency, amount_minor, fixed_side)
        now = utcnow()
        quote = ProviderQuote(
            quote_id=f"bp_qt_{uuid.uuid4().hex[:24]}",
            budget_id=budget_id,
            sell_currency=sell_currency,
            buy_currency=buy_currency,
            sell_amount_minor=sell,
            buy_amount_minor=buy,
            rate=rate,
            fixed_side=fixed_side,
            expires_at=now + QUOTE_LIFETIME,
        )
        async with unit_of_work(self.factory) as session:
            await self.budget_row(session, company_id, budget_id)
            for currency in (sell_currency, buy_currency):
                if await self.balance_of(session, company_id, budget_id, currency) is None:
                    raise CurrencyNotHeld(f"The budget does not hold {currency}.")
            await session.execute(
                _NEW_QUOTE,
                {
                    "company_id": company_id,
                    "quote_id": quote.quote_id,
                    "budget_id": budget_id,
                    "sell_currency": sell_currency,
                    "buy_currency": buy_currency,
                    "sell_amount_minor": sell,
                    "buy_amount_minor": buy,
                    "rate": str(rate),
                    "fixed_side": fixed_side.value,
                    "expires_at": quote.expires_at,
                    "created_at": now,
                },
            )
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return quote

    async def execute_trade(
        self, *, company_id: int, quote_id: str, idempotency_key: str
    ) -> ProviderTrade:
        mode = await self.sim.enter(company_id, "execute_trade")
        async with unit_of_work(self.factory) as session:
            quote = await self._quote_row(session, company_id, quote_id)
            trade = await self._trade_by_key(session, company_id, idempotency_key)
            if trade is None:
                trade = await self._execute(
                    session,
                    company_id=company_id,
                    quote=quote,
                    key=idempotency_key,
                    pending=mode is FaultMode.PENDING,
                )
            elif trade.quote_id != quote_id:
                raise KeyReusedForAnotherQuote()
            answer = _trade(trade, quote)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    async def trade_by_key(self, *, company_id: int, idempotency_key: str) -> ProviderTrade | None:
        mode = await self.sim.enter(company_id, "trade_status")
        async with unit_of_work(self.factory) as session:
            trade = await self._trade_by_key(session, company_id, idempotency_key)
            if trade is None:
                answer = None
            else:
                quote = await self._quote_row(session, company_id, trade.quote_id)
                if trade.status == TradeStatus.PENDING.value:
                    await self._settle_pending(session, company_id, trade, quote)
                answer = _trade(trade, quote)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return answer

    # --------------------------------------------------------------------------- private

    async def _execute(
        self,
        session: AsyncSession,
        *,
        company_id: int,
        quote: SandboxBankprovFxQuote,
        key: str,
        pending: bool,
    ) -> SandboxBankprovFxTrade:
        if await self._trade_of_quote(session, quote.quote_id) is not None:
            raise QuoteAlreadyExecuted()
        now = utcnow()
        if quote.expires_at <= now:
            raise QuoteExpiredAtProvider()
        trade_id = f"bp_fx_{uuid.uuid4().hex[:24]}"
        values = {
            "company_id": company_id,
            "trade_id": trade_id,
            "quote_id": quote.quote_id,
            "idempotency_key": key,
            "status": (TradeStatus.PENDING if pending else TradeStatus.COMPLETED).value,
            "created_at": now,
            "executed_at": None if pending else now,
        }
        # Nothing when a unique key, its idempotency key's or its quote's, holds one already.
        trade = await create_unless_taken(session, SandboxBankprovFxTrade, values)
        if trade is None:
            # A concurrent call won: the same key gets its trade, another key is refused.
            found = await self._trade_by_key(session, company_id, key)
            if found is None or found.quote_id != quote.quote_id:
                raise QuoteAlreadyExecuted()
            return found
        await self.move(
            session,
            company_id=company_id,
            budget_id=quote.budget_id,
            currency=quote.sell_currency,
            amount_minor=-quote.sell_amount_minor,
            kind="fx_sell",
            reference=trade_id,
        )
        if not pending:
            await self._credit_buy(session, company_id, quote, trade_id)
        return trade

    async def _settle_pending(
        self,
        session: AsyncSession,
        company_id: int,
        trade: SandboxBankprovFxTrade,
        quote: SandboxBankprovFxQuote,
    ) -> None:
        now = utcnow()
        result = await session.execute(
            update(SandboxBankprovFxTrade)
            .where(
                SandboxBankprovFxTrade.id == trade.id,
                SandboxBankprovFxTrade.status == TradeStatus.PENDING.value,
            )
            .values(status=TradeStatus.COMPLETED.value, executed_at=now)
            .execution_options(synchronize_session=False)
        )
        if result.rowcount == 1:  # type: ignore[attr-defined]
            await self._credit_buy(session, company_id, quote, trade.trade_id)
        await session.refresh(trade)

    async def _credit_buy(
        self,
        session: AsyncSession,
        company_id: int,
        quote: SandboxBankprovFxQuote,
        trade_id: str,
    ) -> None:
        await self.move(
            session,
            company_id=company_id,
            budget_id=quote.budget_id,
            currency=quote.buy_currency,
            amount_minor=quote.buy_amount_minor,
            kind="fx_buy",
            reference=trade_id,
        )

    async def _quote_row(
        self, session: AsyncSession, company_id: int, quote_id: str
    ) -> SandboxBankprovFxQuote:
        row = (
            await session.execute(
                select(SandboxBankprovFxQuote).where(
                    SandboxBankprovFxQuote.quote_id == quote_id,
                    SandboxBankprovFxQuote.company_id == company_id,
                )
            )
        ).scalar_one_or_none()
        if row is None:
            raise QuoteUnknown()
        return row

    async def _trade_by_key(
        self, session: AsyncSession, company_id: int, key: str
    ) -> SandboxBankprovFxTrade | None:
        return (
            await session.execute(
                select(SandboxBankprovFxTrade).where(
                    SandboxBankprovFxTrade.idempotency_key == key,
                    SandboxBankprovFxTrade.company_id == company_id,
                )
            )
        ).scalar_one_or_none()

    async def _trade_of_quote(
        self, session: AsyncSession, quote_id: str
    ) -> SandboxBankprovFxTrade | None:
        return (
            await session.execute(
                select(SandboxBankprovFxTrade).where(SandboxBankprovFxTrade.quote_id == quote_id)
            )
        ).scalar_one_or_none()


def _trade(trade: SandboxBankprovFxTrade, quote: SandboxBankprovFxQuote) -> ProviderTrade:
    return ProviderTrade(
        trade_id=trade.trade_id,
        quote_id=quote.quote_id,
        status=TradeStatus(trade.status),
        sell_currency=quote.sell_currency,
        buy_currency=quote.buy_currency,
        sell_amount_minor=quote.sell_amount_minor,
        buy_amount_minor=quote.buy_amount_minor,
        rate=Decimal(quote.rate),
        executed_at=trade.executed_at,
    )
