"""Schemathesis hooks: what the OpenAPI document states in words that JSON Schema cannot.

Loaded by the schemathesis CLI through SCHEMATHESIS_HOOKS=tests.fuzz.hooks.
* `e164`: a phone number that exists in its country's numbering plan (the document's pattern
  gives the shape; validity per country is beyond a regular expression);
* `date`: dates of birth lie before today and not before 1900 (the only date the API takes).
* `pdf-jpeg-png`: upload parts that are real PDF, JPEG or PNG files (checked by content);
* `recent-date`: a proof of address's date, within the last three months;
* `iban`, `bic`: account identifiers whose check digits and country codes are right (the
  pattern gives the shape; a checksum is beyond a schema).
Everything else, including the decimals an amount may have in its currency, is in the
document itself.
"""

from __future__ import annotations

from datetime import date, timedelta

import phonenumbers
import schemathesis
from hypothesis import strategies as st

from tests.documents import samples

VALID_PHONES = sorted(
    phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    for region in phonenumbers.SUPPORTED_REGIONS
    if (number := phonenumbers.example_number(region)) is not None
)

schemathesis.openapi.format("e164", st.sampled_from(VALID_PHONES))
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
