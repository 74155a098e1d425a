"""Request bodies with valid defaults; tests override just the field under test."""

from __future__ import annotations

import itertools
from typing import Any

_sequence = itertools.count(1)


def user_payload(**overrides: Any) -> dict[str, Any]:
    n = next(_sequence)
    payload: dict[str, Any] = {
        "Email": f"ada{n}@example.com",
        "FirstName": "Ada",
        "LastName": "Lovelace",
        "Phone": "+447911123456",
        "ExternalUserId": f"cust_{n}",
        "AccountType": "personal",
        "DateOfBirth": "1990-05-17",
        "Address": "12 Analytical Row",
        "City": "London",
        "Country": "GB",
        "ZipCode": "N1 9GU",
    }
    payload.update(overrides)
    return {k: v for k, v in payload.items() if v is not ...}
