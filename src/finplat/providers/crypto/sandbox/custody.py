"""Sandbox crypto rail: its custody balance per company and stablecoin, summed from its own
tables (never from the platform's ledger):

    + every transfer of a stablecoin still on chain at an address the rail issued (`SEEN`,
      whatever its confirmations: the coins are at the address; one reorganised away is not)
    - every sale completed (`sandbox_crypto_conversions`, the coins it sold)
    - every withdrawal confirmed, with the chain's network fee the rail paid to send it
    - every card load completed (coins sent from custody to the card provider)
    + for every card-provider funding completed, the coins it bought with the fiat at its own
      rate beyond those it delivered (the company's fee, kept in custody)

A movement on its way (a sale pending, a withdrawal broadcast, a transfer not final) is still
held: it leaves custody when it is final.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import ROUND_DOWN, Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.unit_of_work import unit_of_work
from finplat.providers.crypto.card_rails import RailTransferKind, RailTransferStatus
from finplat.providers.crypto.custody import COIN_EXPONENT, coin_minor
from finplat.providers.crypto.port import (
    ChainDepositStatus,
    CoinSource,
    ConversionStatus,
    Stablecoin,
)
from finplat.providers.crypto.sandbox.card_transfers import SandboxCardTransfer
from finplat.providers.crypto.sandbox.models import SandboxChainDeposit, SandboxConversion
from finplat.providers.crypto.sandbox.withdrawals import (
    NETWORK_FEES,
    SandboxWithdrawal,
)
from finplat.providers.crypto.withdrawals import WithdrawalStatus
from finplat.providers.sandbox.simulator import Simulator

OPERATIONS = ("custody_balances",)


class SandboxCustody:
    """Mixed into the sandbox crypto rail (it provides `factory` and `sim`)."""

    factory: async_sessionmaker[AsyncSession]
    sim: Simulator

    async def custody_balances(self, *, company_id: int) -> dict[str, int]:
        await self.sim.enter(company_id, "custody_balances")
        held: dict[str, int] = defaultdict(int)
        coins = {coin.value for coin in Stablecoin}
        async with unit_of_work(self.factory) as session:
            deposits = await session.execute(
                select(SandboxChainDeposit.token, SandboxChainDeposit.amount).where(
                    SandboxChainDeposit.company_id == company_id,
                    SandboxChainDeposit.status == ChainDepositStatus.SEEN.value,
                )
            )
            for token, amount in deposits.all():
                minor = coin_minor(amount)
                if token in coins and minor is not None:
                    held[token] += minor
            sales = await session.execute(
                select(SandboxConversion.currency, SandboxConversion.amount_minor).where(
                    SandboxConversion.company_id == company_id,
                    SandboxConversion.status == ConversionStatus.COMPLETED.value,
                    # The card provider's coins arrive for the sale and leave with it.
                    SandboxConversion.source == CoinSource.CUSTODY.value,
                )
            )
            for currency, amount_minor in sales.all():
                held[currency] -= amount_minor
            sent = await session.execute(
                select(
                    SandboxWithdrawal.currency,
                    SandboxWithdrawal.chain_id,
                    SandboxWithdrawal.amount_minor,
                ).where(
                    SandboxWithdrawal.company_id == company_id,
                    SandboxWithdrawal.status == WithdrawalStatus.CONFIRMED.value,
                )
            )
            for currency, chain_id, amount_minor in sent.all():
                held[currency] -= amount_minor + NETWORK_FEES[chain_id]
            await _card_transfers(session, company_id, held)
        return dict(held)


async def _card_transfers(session: AsyncSession, company_id: int, held: dict[str, int]) -> None:
    from finplat.providers.crypto.sandbox import adapter  # it mixes this module's class in

    rows = await session.execute(
        select(SandboxCardTransfer).where(
            SandboxCardTransfer.company_id == company_id,
            SandboxCardTransfer.status == RailTransferStatus.COMPLETED.value,
        )
    )
    for row in rows.scalars():
        if row.kind == RailTransferKind.CARD_LOAD.value:
            held[row.currency] -= row.amount_minor
            continue
        # A funding: the rail bought with the fiat at its buying rate (`quote_card_funding`)
        # and delivered `amount_minor`; what it bought beyond that stays in custody.
        assert row.fiat_currency is not None
        assert row.fiat_amount_minor is not None
        mid = adapter.MID_RATES_USD[row.fiat_currency] / adapter.MID_RATES_USD[row.currency]
        rate = (mid * (1 - adapter.SPREAD)).quantize(adapter.RATE_PLACES, rounding=ROUND_DOWN)
        fiat = Decimal(row.fiat_amount_minor) / 100
        bought = int((fiat * rate * 10**COIN_EXPONENT).to_integral_value(rounding=ROUND_DOWN))
        held[row.currency] += max(bought - row.amount_minor, 0)
