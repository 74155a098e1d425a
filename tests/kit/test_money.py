from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from finplat.kit.money import DecimalAmount, ExcessPrecision, exponent, from_minor, to_minor


def test_exponents_follow_iso_4217_and_stablecoins() -> None:
    assert exponent("USD") == 2
    assert exponent("JPY") == 0
    assert exponent("KWD") == 3
    assert exponent("USDC") == 6
    assert exponent("usdt") == 6


def test_amount_with_more_decimals_than_the_currency_allows_is_refused() -> None:
    with pytest.raises(ExcessPrecision):
        to_minor(Decimal("1.005"), "USD")
    with pytest.raises(ExcessPrecision):
        to_minor(Decimal("1.5"), "JPY")


def test_trailing_zeros_are_not_excess_precision() -> None:
    assert to_minor(Decimal("1.500"), "USD") == 150


@given(
    st.integers(min_value=-(10**15), max_value=10**15),
    st.sampled_from(["USD", "JPY", "USDC", "KWD"]),
)
def test_minor_units_round_trip_exactly(minor: int, currency: str) -> None:
    assert to_minor(from_minor(minor, currency), currency) == minor


class _Wire(BaseModel):
    Value: DecimalAmount


@given(st.integers(min_value=-(10**13), max_value=10**13), st.sampled_from([0, 2, 6]))
def test_amounts_are_json_numbers_with_exact_digits(minor: int, places: int) -> None:
    value = Decimal(minor).scaleb(-places)
    rendered = _Wire(Value=value).model_dump_json()
    parsed = __import__("json").loads(rendered, parse_float=Decimal)["Value"]
    assert Decimal(parsed) == value
    assert '"' not in rendered.split(":", 1)[1]  # a number, not a string
