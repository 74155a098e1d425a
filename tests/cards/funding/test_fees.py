"""The card fee function: percentage rounded up to the cent, plus the fixed fee, never more
than the amount."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from finplat.cards.funding.fees import fee_of

amounts = st.integers(min_value=500, max_value=25_000_000)
percents = st.decimals(min_value=0, max_value=100, places=3, allow_nan=False)
fixed = st.integers(min_value=0, max_value=1_000)


@given(amounts, percents, fixed)
def test_percentage_fee_is_rounded_up_to_the_next_cent(amount: int, pct: Decimal, fix: int) -> None:
    fee = fee_of(amount, pct, fix)
    exact = Decimal(amount) * pct / 100 + fix
    assert fee <= amount
    if exact <= amount:
        assert exact <= fee < exact + 1


@given(amounts, percents, fixed)
def test_net_plus_fee_is_the_amount(amount: int, pct: Decimal, fix: int) -> None:
    fee = fee_of(amount, pct, fix)
    assert 0 <= amount - fee <= amount


def test_a_fraction_of_a_cent_costs_a_whole_cent() -> None:
    assert fee_of(1001, Decimal("1"), 0) == 11  # 10.01 cents -> 11
    assert fee_of(1000, Decimal("1"), 0) == 10
    assert fee_of(500, Decimal("1.5"), 25) == 33  # 7.5 -> 8, + 25
