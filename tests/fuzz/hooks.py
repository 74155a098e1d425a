"""Schemathesis hooks: what the OpenAPI document states in words that JSON Schema cannot.

Loaded by the schemathesis CLI through SCHEMATHESIS_HOOKS=tests.fuzz.hooks.
* `e164`: a phone number that exists in its country's numbering plan (the document's pattern
  gives the shape; validity per country is beyond a regular expression);
* `safe-text`: one line of text without control characters or surrounding whitespace (the
  document names the format instead of showing its long regular expression);
* `email`: a mailbox address outside the special-use domains the API refuses (the document
  says so in words; schemathesis' own addresses include `.test`);
* `date`: dates of birth lie before today and not before 1900 (the only date the API takes).
* `pdf-jpeg-png`: upload parts that are real PDF, JPEG or PNG files (checked by content);
* `recent-date`: a proof of address's date, within the last three months;
* `payment-expiry`: a payment request's expiry, between one minute and 90 days ahead;
* `start-date`, `end-date`: a mandate's dates, from today on, the end always after any start
  the hooks draw (within a year, then the year after);
* `iban`, `bic`: account identifiers whose check digits and country codes are right (the
  pattern gives the shape; a checksum is beyond a schema);
* integers in paths and query strings are written as plain digits (the document's
  description says so): a whole number the fuzzer drew as a float (`18.0`, valid for an
  `integer` schema in JSON Schema, and learned from responses) is sent as `18`;
* a KYC request without `Ssn` names a nationality other than the US: without `Nationality`
  the user's stored `Country` decides whether `Ssn` is required, and a user the fuzzer
  created in the US made a schema-valid body a 400 `SSN_REQUIRED`, as the document says.
* an integer in a body is an integer literal (the API description says `1.0` is refused;
  JSON Schema cannot tell `1.0` from `1`): a whole number the fuzzer drew as a float is sent
  as an integer, as in paths and query strings;
* an amount may also be sent as a decimal string (the API description says so; the document
  shows the number, whose bounds and decimals JSON Schema can state): a negative case whose
  only fault is an amount written as such a string is valid data, and is dropped.
* a voucher group's or voucher's amount comes with its currency (the description says the
  amounts need it): an absent or null currency beside an amount is filled in with one that
  takes any decimals the document allows (USDC); a validity window that does not end after
  it starts loses its end, and an aggregate cap below the value is left out (the
  descriptions say so; JSON Schema cannot compare two fields).
* rules the descriptions state across fields or with the clock: a referral boost ends after
  it starts and carries the fields of its `Kind` only; a community membership expires in the
  future; a loyalty programme's rate is the one its `PointsRule` names; a partner-hosted
  configuration carries its `ApiKey` (required the first time); a referral programme's levels
  start at 0, increase, have unique codes and whole amounts; a wallet withdrawal's
  destination is an address of its `ChainId`; a loyalty import is a real CSV file; a MOR
  simple user's new password is not its email (the description says so) when it is
  schema-valid.
Everything else, including the decimals an amount may have in its currency, is in the
document itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import phonenumbers
import schemathesis
from hypothesis import strategies as st

from finplat.errors import ValidationFailed
from finplat.kit.fields import SAFE_TEXT_PATTERN
from finplat.mor.identity.passwords import MAX_LENGTH, MIN_LENGTH, check_policy
from finplat.providers.crypto import addresses
from finplat.providers.crypto.port import Chain
from tests.documents import samples

VALID_PHONES = sorted(
    phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    for region in phonenumbers.SUPPORTED_REGIONS
    if (number := phonenumbers.example_number(region)) is not None
)

schemathesis.openapi.format("e164", st.sampled_from(VALID_PHONES))
# The shortest `safe-text` field takes 16 characters; longer values would only be filtered out.
SAFE_TEXT = re.compile(SAFE_TEXT_PATTERN)
schemathesis.openapi.format(
    "safe-text",
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=16).filter(SAFE_TEXT.fullmatch),
)
# The local part takes the punctuation a dot-atom may carry, as schemathesis' own addresses do.
schemathesis.openapi.format(
    "email",
    st.from_regex(
        r"[a-z0-9!#$%&'*+/=?^_`{|}~-]{1,10}@[a-z0-9]{1,10}\.(com|org|net|io)", fullmatch=True
    ),
)
schemathesis.openapi.format(
    "date",
    st.dates(min_value=date(1900, 1, 1), max_value=date.today() - timedelta(days=1)).map(
        date.isoformat
    ),
)
# Text, not bytes: schemathesis checks generated values against the schema (such as "`Files`
# or `File`, not both") only when they are strings; a PDF can be plain ASCII.
schemathesis.openapi.format(
    "pdf-jpeg-png", st.sampled_from([samples.ascii_pdf(100), samples.ascii_pdf(120, 80)])
)
schemathesis.openapi.format(
    "recent-date",
    st.integers(min_value=0, max_value=85).map(
        lambda days: (date.today() - timedelta(days=days)).isoformat()
    ),
)

schemathesis.openapi.format(
    "payment-expiry",
    st.integers(min_value=10, max_value=80 * 24 * 60).map(
        lambda minutes: (datetime.now(UTC) + timedelta(minutes=minutes)).isoformat()
    ),
)
schemathesis.openapi.format(
    "start-date",
    st.integers(min_value=0, max_value=365).map(
        lambda days: (datetime.now(UTC).date() + timedelta(days=days)).isoformat()
    ),
)
schemathesis.openapi.format(
    "end-date",
    st.integers(min_value=366, max_value=730).map(
        lambda days: (datetime.now(UTC).date() + timedelta(days=days)).isoformat()
    ),
)

# Real-world examples (published test IBANs of SEPA countries and well-known BICs).
VALID_IBANS = (
    "DE89370400440532013000",
    "GB29NWBK60161331926819",
    "FR1420041010050500013M02606",
    "NL91ABNA0417164300",
    "ES9121000418450200051332",
)
VALID_BICS = ("DEUTDEFF", "NWBKGB2L", "BNPAFRPP", "COBADEFFXXX", "ABNANL2A", "CHASUS33")
schemathesis.openapi.format("iban", st.sampled_from(VALID_IBANS))
schemathesis.openapi.format("bic", st.sampled_from(VALID_BICS))

KYC_REQUEST = re.compile(
    r"^(/api/v2/users/\{userId\}/(kyc/(sdk-token|manual|reusable-identity)|sumsub/kyc-url)"
    r"|/api/v2/mor/public/me/kyc-url)$"
)
NOT_US = "GB"


# Terms with a validity window (and for vouchers amounts): voucher groups, vouchers and the
# cards' discount codes.
VOUCHER_TERMS = re.compile(
    r"^/api/v2/admin/(vouchers/groups(/\{groupId\}/vouchers)?|discount-codes)$"
)
# (currency, amounts, window start, window end, cap, value) of a group's and a voucher's terms.
TERM_FIELDS = (
    (
        "DefaultCurrency",
        ("DefaultValue", "DefaultAggregateCap"),
        "DefaultValidFrom",
        "DefaultValidUntil",
        "DefaultAggregateCap",
        "DefaultValue",
    ),
    (
        "Currency",
        ("Value", "MaximumAggregateValue"),
        "ValidFrom",
        "ValidUntil",
        "MaximumAggregateValue",
        "Value",
    ),
)


def _voucher_terms(body: dict[str, Any]) -> dict[str, Any]:
    body = dict(body)
    for currency, amounts, start, end, cap, value in TERM_FIELDS:
        if body.get(currency) is None and any(body.get(a) is not None for a in amounts):
            body[currency] = "USDC"
        starts, ends = body.get(start), body.get(end)
        if isinstance(starts, str) and isinstance(ends, str):
            try:
                if datetime.fromisoformat(ends) <= datetime.fromisoformat(starts):
                    del body[end]
            except (TypeError, ValueError):
                pass  # not a date-time: the body is invalid anyway
        caps, values = body.get(cap), body.get(value)
        if (
            isinstance(caps, int | float)
            and isinstance(values, int | float)
            and not isinstance(caps, bool)
            and not isinstance(values, bool)
            and caps < values
        ):
            del body[cap]
    return body


schemathesis.openapi.format(
    "membership-expiry",
    st.integers(min_value=1, max_value=365).map(
        lambda days: (datetime.now(UTC) + timedelta(days=days)).isoformat()
    ),
)
# A loyalty import with the header line only: well-formed, imports nothing.
schemathesis.openapi.format(
    "transactions-csv", st.just("TransactionId,UserId,Mid,Amount,Currency,OccurredAt\n")
)


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _boost_terms(body: dict[str, Any]) -> dict[str, Any]:
    body = dict(body)
    starts, ends = body.get("StartsAt"), body.get("EndsAt")
    if isinstance(starts, str) and isinstance(ends, str):
        try:
            start = datetime.fromisoformat(starts)
            if datetime.fromisoformat(ends) <= start:
                body["EndsAt"] = (start + timedelta(days=30)).isoformat()
        except (TypeError, ValueError, OverflowError):
            pass  # not a date-time: the body is invalid anyway
    kind = body.get("Kind")
    own, other = (
        (("Multiplier",), ("QualifiedFriendCount", "MilestoneAmount"))
        if kind == "MULTIPLIER"
        else (
            ("QualifiedFriendCount", "MilestoneAmount"),
            ("Multiplier", "MaximumIncrementalReward"),
        )
    )
    if kind not in ("MULTIPLIER", "MILESTONE"):
        return body
    for name in other:
        if name in body and _number(body[name]):
            del body[name]
    for name in own:
        if body.get(name) is None:
            body[name] = 2
    return body


def _future(body: dict[str, Any], name: str) -> dict[str, Any]:
    value = body.get(name)
    if isinstance(value, str):
        try:
            if datetime.fromisoformat(value) <= datetime.now(UTC):
                return {**body, name: (datetime.now(UTC) + timedelta(days=365)).isoformat()}
        except (TypeError, ValueError):
            pass
    return body


def _points_rule(body: dict[str, Any], *, creating: bool) -> dict[str, Any]:
    rule = body.get("PointsRule", "PER_CURRENCY_UNIT" if creating else None)
    if rule not in ("PER_CURRENCY_UNIT", "PER_TRANSACTION"):
        return body  # the stored rule decides (a mismatch with it is a 409)
    own, other = (
        ("PointsPerUnit", "PointsPerTransaction")
        if rule == "PER_CURRENCY_UNIT"
        else ("PointsPerTransaction", "PointsPerUnit")
    )
    body = dict(body)
    if other in body and _number(body[other]):
        del body[other]
    if body.get(own) is None:
        body[own] = 1
    return body


def _partner_key(body: dict[str, Any]) -> dict[str, Any]:
    hosted = body.get("PartnerHosted")
    if isinstance(hosted, dict) and hosted.get("ApiKey") is None:
        return {**body, "PartnerHosted": {**hosted, "ApiKey": "fuzz-partner-key"}}
    return body


def _destination(body: dict[str, Any]) -> dict[str, Any]:
    chain, address = body.get("ChainId"), body.get("DestinationAddress")
    if chain not in {c.value for c in Chain} or not isinstance(address, str):
        return body
    if not 1 <= len(address) <= 64:
        return body  # invalid by the schema already
    return {**body, "DestinationAddress": addresses.encode(Chain(chain), bytes(range(1, 21)))}


def _whole(value: Any) -> Any:
    """A valid amount as a whole number: whole units have no decimals too many in any
    currency."""
    if isinstance(value, float) and value >= 0:
        return int(value)
    return value


def _program_levels(body: dict[str, Any]) -> dict[str, Any]:
    levels = body.get("Levels")
    if not isinstance(levels, list) or not all(isinstance(each, dict) for each in levels):
        return body
    seen: set[str] = set()
    ladder = []
    for index, level in enumerate(levels):
        level = dict(level)
        if _number(level.get("Threshold")) and level.get("Threshold") is not None:
            level["Threshold"] = index  # the first 0, then increasing
        for name in ("WelcomeReward", "QualificationReward"):
            level[name] = _whole(level.get(name))
        code = level.get("Code")
        if isinstance(code, str) and code in seen:
            level["Code"] = f"L{index}"
        if isinstance(code, str):
            seen.add(level["Code"])
        ladder.append(level)
    body = {**body, "Levels": ladder}
    if "QualifyingTopupMinimum" in body:
        body["QualifyingTopupMinimum"] = _whole(body["QualifyingTopupMinimum"])
    return body


BOOSTS = "/api/v2/referrals/programs/{programId}/boosts"
PROGRAM = "/api/v2/admin/referrals/program"
COMMUNITY = "/api/v2/referrals/programs/{programId}/community/members"
LOYALTY_PROGRAMS = "/api/v2/loyalty/programs"
LOYALTY_PROGRAM = "/api/v2/loyalty/programs/{programId}"
CONFIGURATION = "/api/v2/company/configuration"
WITHDRAWAL = "/api/v2/crypto-virtual-accounts/bankprov-to-wallet/initiate"
MOR_PASSWORDS = {
    "/api/v2/mor/public/users": "Password",
    "/api/v2/mor/public/me/password": "NewPassword",
}
POLICY_PASSWORD = "fuzz-Policy-Password-2026"


def _password_policy(body: dict[str, Any], name: str) -> dict[str, Any]:
    """A schema-valid password the policy refuses becomes one it accepts (a password of a
    length the schema refuses stays as drawn)."""
    password, email = body.get(name), body.get("Email")
    if not isinstance(password, str) or not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        return body
    try:
        check_policy(password, email=email if isinstance(email, str) else "")
    except ValidationFailed:
        return {**body, name: POLICY_PASSWORD}
    return body


def _cross_field(path: str, method: str, body: dict[str, Any]) -> dict[str, Any]:
    if path == PROGRAM and method == "PUT":
        return _program_levels(body)
    if path == BOOSTS and method == "POST":
        return _boost_terms(body)
    if path == COMMUNITY and method == "POST":
        return _future(body, "ExpiresAt")
    if path in (LOYALTY_PROGRAMS, LOYALTY_PROGRAM):
        return _points_rule(body, creating=path == LOYALTY_PROGRAMS)
    if path == CONFIGURATION:
        return _partner_key(body)
    if path == WITHDRAWAL:
        return _destination(body)
    if path in MOR_PASSWORDS and method == "POST":
        return _password_policy(body, MOR_PASSWORDS[path])
    return body


@schemathesis.hook
def map_body(ctx: schemathesis.HookContext, body: Any) -> Any:
    body = _integers(body)
    operation = ctx.operation
    if operation is not None and VOUCHER_TERMS.match(operation.path) and isinstance(body, dict):
        return _voucher_terms(body)
    if operation is not None and isinstance(body, dict):
        body = _cross_field(operation.path, operation.method.upper(), body)
    if (
        operation is not None
        and KYC_REQUEST.match(operation.path)
        and isinstance(body, dict)
        and body.get("Ssn") is None
        and body.get("Nationality") is None
    ):
        # Only an absent or null Nationality is filled in: a body invalid in any field stays
        # invalid, so negative cases are not turned into valid ones.
        return {**body, "Nationality": NOT_US}
    return body


def _integers(value: Any) -> Any:
    """Whole-number floats as integers, all through a JSON body: the same value to JSON Schema,
    so a negative case stays negative and a positive one positive."""
    if isinstance(value, dict):
        return {name: _integers(each) for name, each in value.items()}
    if isinstance(value, list):
        return [_integers(each) for each in value]
    return _plain(value)


# A decimal written as text, as an amount field takes it (`finplat.kit.money`).
DECIMAL_TEXT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")


@schemathesis.hook
def filter_body(ctx: schemathesis.HookContext, body: Any) -> bool:
    operation = ctx.operation
    if operation is None or not isinstance(body, dict):
        return True
    for alternative in operation.body:
        if alternative.media_type != "application/json":
            continue
        validator = alternative.get_validator()
        if any(validator.is_valid(variant) for variant in _amounts_as_numbers(body)):
            return False
    return True


def _amounts_as_numbers(value: Any) -> Iterator[Any]:
    """`value` with one decimal string written as the number it means, for each such string."""
    if isinstance(value, str) and DECIMAL_TEXT.fullmatch(value):
        number = Decimal(value)
        yield int(number) if number == number.to_integral_value() else float(number)
    elif isinstance(value, dict):
        for name, each in value.items():
            for variant in _amounts_as_numbers(each):
                yield {**value, name: variant}
    elif isinstance(value, list):
        for index, each in enumerate(value):
            for variant in _amounts_as_numbers(each):
                yield [*value[:index], variant, *value[index + 1 :]]


def _plain(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_plain(each) for each in value]
    return value


@schemathesis.hook
def map_case(ctx: schemathesis.HookContext, case: Any) -> Any:
    for values in (case.path_parameters, case.query):
        if isinstance(values, dict):
            for name, value in values.items():
                values[name] = _plain(value)
    return case
