"""Money invariants of the crypto-to-fiat pricing, for any amount and rate: the fee is 0.5 %
rounded up to the coin's cent and never the whole amount, and the fiat paid never exceeds
what the rest is worth (rounded down by less than one fiat cent)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from finplat.crypto.exchange.service import fee_of, fiat_for
from finplat.kit.money import Money, from_minor

COIN_CENT = 10**4  # one cent of a six-decimal stablecoin, in minor units

amounts = st.integers(min_value=10**6, max_value=10**12)  # 1 to 1,000,000 coins
coins = st.sampled_from(["USDC", "USDT"])
fiats = st.sampled_from(["EUR", "GBP", "USD"])
rates = st.decimals(min_value=Decimal("0.5"), max_value=Decimal("2"), places=8, allow_nan=False)


@given(amount=amounts, coin=coins)
def test_the_fee_is_half_a_percent_rounded_up_to_the_cent(amount: int, coin: str) -> None:
    fee = fee_of(Money(amount, coin))
    assert fee % COIN_CENT == 0
    assert fee >= amount * Decimal("0.005")
    assert fee - COIN_CENT < amount * Decimal("0.005")
    assert 0 < fee < amount


@given(amount=amounts, coin=coins, fiat=fiats, rate=rates)
def test_the_fiat_paid_never_exceeds_what_the_coins_are_worth(
    amount: int, coin: str, fiat: str, rate: Decimal
) -> None:
    net = amount - fee_of(Money(amount, coin))
    paid = from_minor(fiat_for(net, coin, fiat, rate), fiat)
    worth = from_minor(net, coin) * rate
    assert paid <= worth
    assert worth - paid < Decimal("0.01")
