from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

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


def test_excess_precision_is_seen_however_many_digits_the_amount_has() -> None:
    # 30 significant digits: the default context (28) would round it to 100.00.
    with pytest.raises(ExcessPrecision):
        to_minor(Decimal("100.000000000000000000000000001"), "USD")
    assert to_minor(Decimal("1234567890123456789012345678.90"), "USD") == (
        123456789012345678901234567890
    )


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


@given(st.integers(min_value=-(10**24), max_value=10**24), st.sampled_from([0, 2, 3, 6]))
def test_amounts_are_json_numbers_with_exact_digits_at_any_size(minor: int, places: int) -> None:
    from finplat.kit.money import exact_json_numbers

    value = Decimal(minor).scaleb(-places)
    rendered = exact_json_numbers(_Wire(Value=value).model_dump_json().encode())
    parsed = json.loads(rendered, parse_float=Decimal, parse_int=Decimal)["Value"]
    assert parsed == value
    assert b'"Value":"' not in rendered  # a number, not a string


@pytest.mark.parametrize("text", ["100.50", "0", "-5", "0.000001", "250000.00"])
def test_an_amount_as_a_decimal_string_is_that_decimal_exactly(text: str) -> None:
    value = _Wire.model_validate({"Value": text}).Value
    assert value.as_tuple() == Decimal(text).as_tuple()  # 100.50 keeps its trailing zero


@pytest.mark.parametrize(
    "text",
    [
        "1e3",
        " 10",
        "10 ",
        "10,00",
        "NaN",
        "Infinity",
        "-Infinity",
        "+5",
        ".5",
        "5.",
        "",
        "007",
        "1_000",
        "\uff11\uff10",
        "10\n",
        "0x10",
        "1.2.3",
    ],
)
def test_an_amount_string_that_is_not_a_plain_decimal_is_refused(text: str) -> None:
    with pytest.raises(ValidationError, match="decimal string"):
        _Wire.model_validate({"Value": text})


@pytest.mark.parametrize("value", [True, 1.5, None, [], {}])
def test_an_amount_is_never_a_boolean_a_float_or_another_type(value: object) -> None:
    with pytest.raises(ValidationError):
        _Wire.model_validate({"Value": value})


def test_marked_amount_inside_user_text_cannot_be_forged() -> None:
    from finplat.kit.money import exact_json_numbers

    body = json.dumps({"Name": "\\u0000123"}).encode()
    assert exact_json_numbers(body) == body


def test_percentage_fee_rounds_up_to_the_next_minor_unit() -> None:
    from finplat.kit.money import percentage_of

    assert percentage_of(1001, Decimal("1")) == 11  # 10.01 -> 11
    assert percentage_of(1000, Decimal("1")) == 10  # exact stays exact
    assert percentage_of(1, Decimal("0.01")) == 1  # any fraction costs a whole minor unit
    assert percentage_of(0, Decimal("2.5")) == 0


@given(
    st.integers(min_value=0, max_value=10**12), st.decimals(min_value=0, max_value=100, places=4)
)
def test_percentage_fee_is_never_below_the_exact_fee_nor_a_unit_above(
    minor: int, percent: Decimal
) -> None:
    from finplat.kit.money import percentage_of

    exact = Decimal(minor) * percent / 100
    fee = percentage_of(minor, percent)
    assert exact <= fee < exact + 1


def test_money_refuses_mixing_currencies_and_unknown_codes() -> None:
    from finplat.kit.money import Money, UnknownCurrency

    assert Money.of(Decimal("1.50"), "usd") + Money.of(Decimal("2"), "USD") == Money(350, "USD")
    with pytest.raises(ValueError, match="combine"):
        Money.of(Decimal(1), "USD") + Money.of(Decimal(1), "EUR")
    with pytest.raises(UnknownCurrency):
        Money.of(Decimal(1), "ABC")
    assert Money.of(Decimal("0.000001"), "USDC").minor == 1
