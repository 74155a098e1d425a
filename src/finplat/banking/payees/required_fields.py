"""The payment-method catalogue: which currencies each method carries and which fields a payee
needs for it.

One table drives three things, so they cannot disagree: the required-fields form
(`GET /api/v2/banking/payees/required-fields`), the `anyOf` branches of the create request's
schema (what the OpenAPI document promises) and the checks the service makes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class PaymentType(StrEnum):
    COMPANY = "COMPANY"
    INDIVIDUAL = "INDIVIDUAL"


class PaymentMethod(StrEnum):
    SEPA_CREDITTRANSFER = "SEPA.CREDITTRANSFER"
    SEPA_INSTANT = "SEPA.INSTANT"
    FPS = "FPS"
    SWIFT = "SWIFT"


class PayeeCurrency(StrEnum):
    EUR = "EUR"
    GBP = "GBP"
    USD = "USD"


IBAN_PATTERN = r"^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"
BIC_PATTERN = r"^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$"
ACCOUNT_NUMBER_PATTERN = r"^[A-Z0-9]{4,34}$"
UK_ACCOUNT_NUMBER_PATTERN = r"^[0-9]{8}$"
SORT_CODE_PATTERN = r"^[0-9]{6}$"
NAME_MAX = 100
BANK_NAME_MAX = 100
COMMENTS_MAX = 500

SEPA_METHODS = frozenset({PaymentMethod.SEPA_CREDITTRANSFER, PaymentMethod.SEPA_INSTANT})


@dataclass(frozen=True)
class FieldSpec:
    name: str
    required: bool
    description: str
    pattern: str | None = None
    max_length: int | None = None


@dataclass(frozen=True)
class MethodSpec:
    currencies: tuple[PayeeCurrency, ...]
    fields: tuple[FieldSpec, ...]  # the method's own fields, beyond the common ones
    # Exactly one of these fields identifies the account (SWIFT: an IBAN or an account number).
    one_of: tuple[str, ...] = ()
    # Narrower patterns than the property's own, for this method.
    patterns: tuple[tuple[str, str], ...] = ()
    # Values a field may take with this method.
    enums: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)


COMMON_FIELDS: tuple[FieldSpec, ...] = (
    FieldSpec("Name", True, "The recipient's name as the bank holds it.", max_length=NAME_MAX),
    FieldSpec("Comments", False, "A note for the user's own records.", max_length=COMMENTS_MAX),
)
# Fields only some methods take; a field a method does not list is refused with it.
ACCOUNT_FIELDS = ("Iban", "Bic", "BankName", "AccountNumber", "SortCode", "BankCountry")

_IBAN_SEPA = FieldSpec(
    "Iban",
    True,
    "The recipient's IBAN, in capitals without spaces; its country must be in the SEPA zone.",
    IBAN_PATTERN,
    34,
)
_BIC_OPTIONAL = FieldSpec(
    "Bic", False, "The recipient bank's BIC, when the bank asks for it.", BIC_PATTERN, 11
)
_BANK_NAME = FieldSpec("BankName", False, "The recipient's bank.", max_length=BANK_NAME_MAX)

CATALOGUE: dict[PaymentMethod, MethodSpec] = {
    PaymentMethod.SEPA_CREDITTRANSFER: MethodSpec(
        currencies=(PayeeCurrency.EUR,), fields=(_IBAN_SEPA, _BIC_OPTIONAL, _BANK_NAME)
    ),
    PaymentMethod.SEPA_INSTANT: MethodSpec(
        currencies=(PayeeCurrency.EUR,), fields=(_IBAN_SEPA, _BIC_OPTIONAL, _BANK_NAME)
    ),
    PaymentMethod.FPS: MethodSpec(
        currencies=(PayeeCurrency.GBP,),
        fields=(
            FieldSpec(
                "AccountNumber",
                True,
                "The UK account number: 8 digits.",
                UK_ACCOUNT_NUMBER_PATTERN,
                8,
            ),
            FieldSpec(
                "SortCode", True, "The UK sort code: 6 digits, no dashes.", SORT_CODE_PATTERN, 6
            ),
            _BANK_NAME,
            FieldSpec("BankCountry", False, "GB (Faster Payments are UK only).", "^GB$", 2),
        ),
        patterns=(("AccountNumber", UK_ACCOUNT_NUMBER_PATTERN),),
        enums=(("BankCountry", ("GB",)),),
    ),
    PaymentMethod.SWIFT: MethodSpec(
        currencies=(PayeeCurrency.EUR, PayeeCurrency.GBP, PayeeCurrency.USD),
        fields=(
            FieldSpec(
                "Iban",
                False,
                "The recipient's IBAN, where the country uses IBANs. Give either Iban or "
                "AccountNumber.",
                IBAN_PATTERN,
                34,
            ),
            FieldSpec(
                "AccountNumber",
                False,
                "The recipient's account number, where the country has no IBAN. Give either "
                "Iban or AccountNumber.",
                ACCOUNT_NUMBER_PATTERN,
                34,
            ),
            FieldSpec("Bic", True, "The recipient bank's BIC (SWIFT code).", BIC_PATTERN, 11),
            _BANK_NAME,
            FieldSpec(
                "BankCountry", False, "The recipient bank's country (ISO 3166-1 alpha-2).", None, 2
            ),
        ),
        one_of=("Iban", "AccountNumber"),
    ),
}


def method_spec(method: PaymentMethod) -> MethodSpec:
    return CATALOGUE[method]


def supports(method: PaymentMethod, currency: PayeeCurrency) -> bool:
    return currency in CATALOGUE[method].currencies


def form_fields(method: PaymentMethod) -> tuple[FieldSpec, ...]:
    """The fields a payee with `method` takes, common ones first."""
    return COMMON_FIELDS + CATALOGUE[method].fields


def problems(
    method: PaymentMethod, currency: PayeeCurrency, given: dict[str, Any]
) -> dict[str, list[str]]:
    """What is wrong with a create request for `method` (field name -> messages): a currency
    the method does not carry, a missing required field, a field the method does not take,
    a value outside the method's narrower pattern or values. Empty when it fits."""
    spec = CATALOGUE[method]
    found: dict[str, list[str]] = {}
    if currency not in spec.currencies:
        carried = ", ".join(c.value for c in spec.currencies)
        found.setdefault("Currency", []).append(f"{method.value} carries {carried} only.")
    for name in spec.required:
        if given.get(name) is None:
            found.setdefault(name, []).append(f"Required with {method.value}.")
    for name in ACCOUNT_FIELDS:
        if name not in spec.names and given.get(name) is not None:
            found.setdefault(name, []).append(f"Not used with {method.value}.")
    if spec.one_of:
        present = [n for n in spec.one_of if given.get(n) is not None]
        if len(present) != 1:
            message = f"Give exactly one of {' or '.join(spec.one_of)} with {method.value}."
            for name in spec.one_of:
                found.setdefault(name, []).append(message)
    for name, pattern in spec.patterns:
        value = given.get(name)
        if isinstance(value, str) and not re.fullmatch(pattern, value):
            found.setdefault(name, []).append(f"Must match {pattern} with {method.value}.")
    for name, allowed in spec.enums:
        value = given.get(name)
        if value is not None and value not in allowed:
            found.setdefault(name, []).append(
                f"Must be {' or '.join(allowed)} with {method.value}."
            )
    return found


def schema_branches() -> list[Any]:
    """One JSON Schema branch per method, for the create request's `anyOf`: the method's
    currencies, its required fields, the fields it refuses and its narrower patterns."""
    branches: list[dict[str, Any]] = []
    for method, spec in CATALOGUE.items():
        properties: dict[str, Any] = {
            "PaymentMethod": {"const": method.value},
            "Currency": {"enum": [c.value for c in spec.currencies]},
        }
        # A null optional field counts as left out: a refused field may only be null, a
        # required one must be a string.
        for name in ACCOUNT_FIELDS:
            if name not in spec.names:
                properties[name] = {"type": "null"}
        for name in spec.required:
            properties[name] = {"type": "string"}
        for name, pattern in spec.patterns:
            properties[name] = {"type": "string", "pattern": pattern}
        for name, allowed in spec.enums:
            properties[name] = {"anyOf": [{"enum": list(allowed)}, {"type": "null"}]}
        branch: dict[str, Any] = {"properties": properties}
        if spec.required:
            branch["required"] = list(spec.required)
        if spec.one_of:
            branch["anyOf"] = [
                {
                    "required": [name],
                    "properties": {
                        other: {"type": "string"} if other == name else {"type": "null"}
                        for other in spec.one_of
                    },
                }
                for name in spec.one_of
            ]
        branches.append(branch)
    return branches
