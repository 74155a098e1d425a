"""Validated field types shared by request schemas: email, E.164 phone, country, dates."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any

import phonenumbers
import pycountry
from email_validator import EmailNotValidError, validate_email
from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema

from finplat.kit.clock import today

E164_PATTERN = r"^\+[1-9][0-9]{6,14}$"
_E164 = re.compile(E164_PATTERN)
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
EARLIEST_BIRTH_DATE = date(1900, 1, 1)


# Special-use domains (RFC 6761 and kin) cannot receive mail for a real customer.
SPECIAL_USE_EMAIL_DOMAINS = ("arpa", "invalid", "local", "localhost", "onion", "test")


def _any_case(word: str) -> str:
    # ECMAScript patterns have no inline case-insensitive flag: spell each letter as [xX].
    return "".join(f"[{c}{c.upper()}]" for c in word)


EMAIL_PATTERN = (
    r"^[^@]+@(?!(?:[^@]*\.)?(?:"
    + "|".join(_any_case(d) for d in SPECIAL_USE_EMAIL_DOMAINS)
    + r")\.?$)[^@]+$"
)
_EMAIL = re.compile(EMAIL_PATTERN)


def _email(value: str) -> str:
    if not _EMAIL.match(value):
        raise ValueError("Not a valid email address: special-use domains are not accepted.")
    try:
        # No DNS lookups: deliverability is the partner's concern, syntax is ours.
        return validate_email(
            value, check_deliverability=False, globally_deliverable=False
        ).normalized
    except EmailNotValidError:
        raise ValueError("Not a valid email address.") from None


def _e164_phone(value: str) -> str:
    if not _E164.fullmatch(value):
        raise ValueError("Must be in E.164 format: '+' then country code and number, no spaces.")
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        raise ValueError("Not a valid phone number.") from None
    if not phonenumbers.is_valid_number(number):
        raise ValueError("Not a valid phone number for its country code.")
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


COUNTRY_CODES: tuple[str, ...] = tuple(sorted(c.alpha_2 for c in pycountry.countries))


def _country(value: str) -> str:
    if value not in COUNTRY_CODES:
        raise ValueError("Must be a two-letter ISO 3166-1 country code in capitals, such as 'GB'.")
    return value


def _no_lone_surrogates(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("Must be valid Unicode text.") from None
    return value


# Free text: no control characters, no leading or trailing whitespace (nothing is trimmed
# silently: such a value is refused), and valid Unicode (no lone surrogates).
_WHITESPACE = r"\u0009-\u000d\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_CONTROL = r"\u0000-\u001f\u007f-\u009f"
SAFE_TEXT_PATTERN = rf"^[^{_CONTROL}{_WHITESPACE}](?:[^{_CONTROL}]*[^{_CONTROL}{_WHITESPACE}])?$"


SafeText = Annotated[
    str, Field(min_length=1, pattern=SAFE_TEXT_PATTERN), AfterValidator(_no_lone_surrogates)
]
"""One-line text; give the length with `Annotated[SafeText, Field(max_length=N)]`."""


@dataclass(frozen=True)
class NamedFormat:
    """A rule the OpenAPI document states as a named `format` and a sentence, where its regular
    expression is too long to read; validation still enforces the expression."""

    name: str
    description: str
    message: str  # the validation error, instead of one quoting the expression


SAFE_TEXT_FORMAT = NamedFormat(
    "safe-text",
    "One line of text: no control characters, no leading or trailing whitespace.",
    "Must be one line of text: no control characters, no leading or trailing whitespace.",
)
# Keyed by the expression each replaces in the document (`finplat.app` swaps them).
NAMED_FORMATS = {SAFE_TEXT_PATTERN: SAFE_TEXT_FORMAT}


def _iso_date(value: Any) -> date:
    if isinstance(value, date):
        return value
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        raise ValueError("Must be a date in the form YYYY-MM-DD.")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ValueError("Not a real calendar date.") from None


def _birth_date(value: date) -> date:
    if value >= today():
        raise ValueError("Must be in the past.")
    if value < EARLIEST_BIRTH_DATE:
        raise ValueError("Must be on or after 1900-01-01.")
    return value


# `_email` refuses the special-use domains (EMAIL_PATTERN); the document says it in words.
EmailAddress = Annotated[
    str,
    Field(
        max_length=254,
        examples=["ada@example.com"],
        description="A mailbox address; special-use domains (.test, .local, .localhost, "
        ".invalid, .onion, .arpa) are not accepted.",
        json_schema_extra={"format": "email"},
    ),
    AfterValidator(_email),
]
# The shape is checked by `_e164_phone`, not a `pattern` constraint, so that a malformed number
# is refused with a sentence rather than the regular expression; the document still shows it.
E164Phone = Annotated[
    str,
    Field(
        examples=["+447911123456"],
        description="E.164: '+', country code and number, no spaces; must be a number that "
        "exists in its country's numbering plan.",
        json_schema_extra={"format": "e164", "pattern": E164_PATTERN},
    ),
    AfterValidator(_e164_phone),
]
CountryCode = Annotated[
    str,
    Field(
        examples=["GB"],
        description="An ISO 3166-1 alpha-2 code in capitals: the providers identify countries "
        "by these codes.",
        json_schema_extra={"enum": list(COUNTRY_CODES)},
    ),
    AfterValidator(_country),
]
IsoDate = Annotated[
    date,
    BeforeValidator(_iso_date),
    WithJsonSchema({"type": "string", "format": "date", "examples": ["1990-05-17"]}),
]
BirthDate = Annotated[
    IsoDate,
    AfterValidator(_birth_date),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date",
            "description": "YYYY-MM-DD, before today and not before 1900-01-01.",
            "examples": ["1990-05-17"],
        }
    ),
]


INTEGER_ONLY = "Must be an integer, written without a fraction or an exponent (1, not 1.0)."


def json_integer(value: Any) -> int:
    """An integer field takes a JSON integer literal only: `1.0` and `1e0` are numbers with a
    fraction or an exponent (the exact JSON parser hands them over as `Decimal`), and taking
    them as 1 would let a client's float bug name card 1."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise ValueError(INTEGER_ONLY)


WholeNumber = Annotated[int, BeforeValidator(json_integer)]
"""An integer in a JSON body (5, never 5.0, 1e0, "5" or true)."""
