"""Currency exponents and the conversion between API decimals and stored minor units.

`Decimal` at the API edge, integers in the database. An amount with more decimals than its
currency allows is refused, never rounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, localcontext
from typing import Annotated, Any

import pycountry
from pydantic import (
    BeforeValidator,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    JsonValue,
    PlainSerializer,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from finplat.errors import ApiError, InvalidAmount

# ISO 4217 currencies whose minor unit is not 2, plus the stablecoins the spec names.
_ZERO_DECIMAL = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
_THREE_DECIMAL = "BHD IQD JOD KWD LYD OMR TND"
_EXPONENTS: dict[str, int] = {
    **dict.fromkeys(_ZERO_DECIMAL.split(), 0),
    **dict.fromkeys(_THREE_DECIMAL.split(), 3),
    "CLF": 4,
    "UYW": 4,
    "USDC": 6,
    "USDT": 6,
}
DEFAULT_EXPONENT = 2


class ExcessPrecision(ValueError):
    """The amount has more decimal places than the currency allows."""


STABLECOINS = frozenset({"USDC", "USDT"})
# Every currency the service accepts: ISO 4217 codes and the stablecoins.
CURRENCY_CODES: tuple[str, ...] = tuple(
    sorted({c.alpha_3 for c in pycountry.currencies} | STABLECOINS)
)


class UnknownCurrency(ValueError):
    """Not an ISO 4217 currency code nor a supported stablecoin."""


def normalize_currency(code: str) -> str:
    """Upper-case ISO 4217 code or stablecoin; anything else raises `UnknownCurrency`."""
    upper = code.strip().upper()
    if upper in CURRENCY_CODES:
        return upper
    raise UnknownCurrency(f"{code!r} is not a supported currency code")


def exponent(currency: str) -> int:
    return _EXPONENTS.get(currency.upper(), DEFAULT_EXPONENT)


def to_minor(amount: Decimal, currency: str) -> int:
    """Convert a decimal amount to integer minor units, refusing excess precision."""
    if not amount.is_finite():
        raise ExcessPrecision(f"{amount} is not a finite amount")
    # Exactly, however many digits: the default context keeps 28 significant digits, and
    # would round 100.000000000000000000000000001 to 100.00 before the check could see it.
    with localcontext() as exact:
        exact.prec = max(exact.prec, len(amount.as_tuple().digits))
        scaled = amount.scaleb(exponent(currency))
    if scaled != scaled.to_integral_value():
        raise ExcessPrecision(
            f"{currency.upper()} amounts allow at most {exponent(currency)} decimal places"
        )
    return int(scaled)


def from_minor(minor: int, currency: str) -> Decimal:
    """Convert integer minor units to a decimal with exactly the currency's decimal places."""
    return Decimal(minor).scaleb(-exponent(currency))


# Amounts are JSON numbers with their exact decimal digits, whatever their size (a double
# would round a 17-digit USDC balance). Pydantic can only write a Decimal as a string, so an
# amount leaves it as a marked string, NUL + plain digits, escaped in JSON as "\u0000..."; the
# API's route class and the webhook envelope writer then turn every marked string into a bare
# number. NUL never occurs in text the API accepts, and an escaped backslash cannot match.
_EXACT_MARK = "\x00"
_MARKED_NUMBER = re.compile(rb'"\\u0000(-?[0-9]+(?:\.[0-9]+)?)"')


def amount_for_json(value: Decimal) -> str:
    return _EXACT_MARK + format(value, "f")


def exact_json_numbers(body: bytes) -> bytes:
    """Turn the marked amount strings of a rendered JSON document into exact JSON numbers."""
    return _MARKED_NUMBER.sub(rb"\1", body)


def schema_number(value: Decimal) -> int | float:
    """A bound written into the OpenAPI document (small, exact values)."""
    return int(value) if value == value.to_integral_value() else float(value)


# A decimal written as text: what a JSON number without an exponent may be, so that `"100.50"`
# means exactly what `100.50` does. No exponent, sign `+`, spaces, thousands separators or
# decimal commas: a client's formatting is never guessed at.
_DECIMAL_TEXT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")
NOT_AN_AMOUNT = 'Must be a number, or a decimal string such as "100.50".'


def _json_number(value: Any) -> Decimal:
    """Amounts are JSON numbers (integers or exactly parsed decimals) or the same decimals as
    strings (DESIGN.md: "amounts are exact decimals given as JSON numbers or decimal
    strings"); never booleans or (lossy) floats."""
    if isinstance(value, str):
        if _DECIMAL_TEXT.fullmatch(value) is None:
            raise ValueError(NOT_AN_AMOUNT)
        return Decimal(value)
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise ValueError(NOT_AN_AMOUNT)
    return Decimal(value)


DecimalAmount = Annotated[
    Decimal,
    BeforeValidator(_json_number),
    PlainSerializer(amount_for_json, return_type=Any, when_used="json"),
    WithJsonSchema({"type": "number"}),
]
"""A money amount: a JSON number in responses; in requests a JSON number or a decimal string
(`"100.50"`); a `Decimal` in Python. The document shows the number (the canonical form, whose
bounds and decimals JSON Schema can state); the API description says strings are taken."""


@dataclass(frozen=True, slots=True, order=True)
class Money:
    """An amount in integer minor units of one currency."""

    minor: int
    currency: str

    @classmethod
    def of(cls, amount: Decimal, currency: str) -> Money:
        """From an API decimal; refuses unknown currencies and excess precision."""
        code = normalize_currency(currency)
        return cls(to_minor(amount, code), code)

    @property
    def amount(self) -> Decimal:
        return from_minor(self.minor, self.currency)

    def _same_currency(self, other: Money) -> None:
        if other.currency != self.currency:
            raise ValueError(f"cannot combine {self.currency} with {other.currency}")

    def __add__(self, other: Money) -> Money:
        self._same_currency(other)
        return Money(self.minor + other.minor, self.currency)

    def __sub__(self, other: Money) -> Money:
        self._same_currency(other)
        return Money(self.minor - other.minor, self.currency)

    def __neg__(self) -> Money:
        return Money(-self.minor, self.currency)


def requested_amount(
    amount: Decimal,
    currency: str,
    *,
    field: str = "Amount",
    error: type[ApiError] = InvalidAmount,
) -> Money:
    """`Money.of` for an amount a caller sent: more decimals than the currency allows is a
    400 (`INVALID_AMOUNT` unless the rule names another code) on `field`, never rounded."""
    try:
        return Money.of(amount, currency)
    except ExcessPrecision as exc:
        raise error(str(exc), validation_errors={field: [str(exc)]}) from None


def percentage_of(minor: int, percent: Decimal) -> int:
    """`percent`% of `minor` units, rounded **up** to the next minor unit.

    The spec's rule for percentage fees and costs: round up before the net amount is computed,
    so the platform never under-collects a fraction of a cent.
    """
    if percent < 0:
        raise ValueError("a percentage fee cannot be negative")
    exact = Decimal(minor) * percent / Decimal(100)
    return int(exact.to_integral_value(rounding=ROUND_CEILING))


@dataclass(frozen=True)
class AmountRange:
    """Bounds of an amount field: documented in the OpenAPI schema, and a value outside them is
    the spec's `INVALID_AMOUNT` (not a generic validation error).

    Use as `Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=...)]`.
    """

    greater_than: Decimal | None = None
    at_least: Decimal | None = None
    at_most: Decimal | None = None

    def _check(self, value: Decimal) -> Decimal:
        if (
            (self.greater_than is not None and value <= self.greater_than)
            or (self.at_least is not None and value < self.at_least)
            or (self.at_most is not None and value > self.at_most)
        ):
            raise PydanticCustomError(
                INVALID_AMOUNT_ERROR, "Must be {bounds}.", {"bounds": self.describe()}
            )
        return value

    def describe(self) -> str:
        parts = []
        if self.greater_than is not None:
            parts.append(f"greater than {self.greater_than}")
        if self.at_least is not None:
            parts.append(f"at least {self.at_least}")
        if self.at_most is not None:
            parts.append(f"at most {self.at_most}")
        return " and ".join(parts)

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        if self.greater_than is not None:
            json_schema["exclusiveMinimum"] = schema_number(self.greater_than)
        if self.at_least is not None:
            json_schema["minimum"] = schema_number(self.at_least)
        if self.at_most is not None:
            json_schema["maximum"] = schema_number(self.at_most)
        return json_schema


INVALID_AMOUNT_ERROR = "invalid_amount"


def precision_by_currency(currency_field: str, amount_field: str) -> list[JsonValue]:
    """JSON Schema branches stating that `amount_field` has at most the decimals of the
    currency in `currency_field` (`anyOf` these on the request object)."""
    by_exponent: dict[int, list[JsonValue]] = {}
    for code in CURRENCY_CODES:
        by_exponent.setdefault(exponent(code), []).append(code)
    return [
        {
            "properties": {
                currency_field: {"enum": codes},
                amount_field: {"multipleOf": schema_number(Decimal(1).scaleb(-places))},
            }
        }
        for places, codes in sorted(by_exponent.items())
    ]
