"""Validated field types shared by request schemas: email, E.164 phone, country, dates."""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any

import phonenumbers
import pycountry
from email_validator import EmailNotValidError, validate_email
from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema

from finplat.kit.clock import today

_E164 = re.compile(r"^\+[1-9]\d{1,14}$")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
EARLIEST_BIRTH_DATE = date(1900, 1, 1)


def _email(value: str) -> str:
    try:
        # No DNS lookups: deliverability is the partner's concern, syntax is ours.
        return validate_email(value, check_deliverability=False).normalized
    except EmailNotValidError:
        raise ValueError("Not a valid email address.") from None


def _e164_phone(value: str) -> str:
    if not _E164.match(value):
        raise ValueError("Must be in E.164 format: '+' then country code and number, no spaces.")
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        raise ValueError("Not a valid phone number.") from None
    if not phonenumbers.is_valid_number(number):
        raise ValueError("Not a valid phone number for its country code.")
    return str(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))


def _country(value: str) -> str:
    code = value.upper()
    if len(code) != 2 or pycountry.countries.get(alpha_2=code) is None:
        raise ValueError("Must be a two-letter ISO 3166-1 country code, such as 'GB'.")
    return code


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


EmailAddress = Annotated[
    str, Field(max_length=320, examples=["ada@example.com"]), AfterValidator(_email)
]
E164Phone = Annotated[
    str, Field(max_length=16, examples=["+447911123456"]), AfterValidator(_e164_phone)
]
CountryCode = Annotated[
    str, Field(min_length=2, max_length=2, examples=["GB"]), AfterValidator(_country)
]
IsoDate = Annotated[
    date,
    BeforeValidator(_iso_date),
    WithJsonSchema({"type": "string", "format": "date", "examples": ["1990-05-17"]}),
]
BirthDate = Annotated[IsoDate, AfterValidator(_birth_date)]
