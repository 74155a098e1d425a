"""The banking provider's markets for businesses, and inferring one from a country.

Only `UK` and `EU` are offered (`US` and `UP` are refused). Without a `Market`, it follows
from `CountryOfIncorporation`: GB is UK, an EU member state is EU; any other country cannot
decide a market, so the request must name one.
"""

from __future__ import annotations

from enum import StrEnum


class Market(StrEnum):
    UK = "UK"
    EU = "EU"


# Markets the provider has (or had) but that are not offered for business onboarding here.
REFUSED_MARKETS = ("US", "UP")

UK_COUNTRIES = ("GB",)
EU_MEMBER_STATES = (
    "AT",
    "BE",
    "BG",
    "CY",
    "CZ",
    "DE",
    "DK",
    "EE",
    "ES",
    "FI",
    "FR",
    "GR",
    "HR",
    "HU",
    "IE",
    "IT",
    "LT",
    "LU",
    "LV",
    "MT",
    "NL",
    "PL",
    "PT",
    "RO",
    "SE",
    "SI",
    "SK",
)
INFERABLE_COUNTRIES = UK_COUNTRIES + EU_MEMBER_STATES


def infer_market(country: str) -> Market | None:
    if country in UK_COUNTRIES:
        return Market.UK
    if country in EU_MEMBER_STATES:
        return Market.EU
    return None
