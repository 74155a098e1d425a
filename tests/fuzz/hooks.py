"""Schemathesis hooks: what the OpenAPI document states in words that JSON Schema cannot.

Loaded by the schemathesis CLI through SCHEMATHESIS_HOOKS=tests.fuzz.hooks.
* `e164`: a phone number that exists in its country's numbering plan (the document's pattern
  gives the shape; validity per country is beyond a regular expression);
* `date`: dates of birth lie before today and not before 1900 (the only date the API takes).
Everything else, including the decimals an amount may have in its currency, is in the
document itself.
"""

from __future__ import annotations

from datetime import date, timedelta

import phonenumbers
import schemathesis
from hypothesis import strategies as st

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
