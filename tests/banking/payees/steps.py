"""Payee steps over HTTP, for the payee tests and every flow that pays out to a payee."""

from __future__ import annotations

from typing import Any

import httpx

SEPA_IBAN = "DE89370400440532013000"  # a valid German IBAN (checksum and format)


def payee_body(**overrides: Any) -> dict[str, Any]:
    """A SEPA EUR company payee; an override of None leaves that field out."""
    body: dict[str, Any] = {
        "Name": "Acme GmbH",
        "PaymentType": "COMPANY",
        "PaymentMethod": "SEPA.CREDITTRANSFER",
        "Currency": "EUR",
        "Iban": SEPA_IBAN,
        **overrides,
    }
    return {k: v for k, v in body.items() if v is not None}


def fps_body(**overrides: Any) -> dict[str, Any]:
    """A UK Faster Payments GBP individual payee."""
    return payee_body(
        **{
            "Name": "Ada Lovelace",
            "PaymentType": "INDIVIDUAL",
            "PaymentMethod": "FPS",
            "Currency": "GBP",
            "Iban": None,
            "AccountNumber": "31926819",
            "SortCode": "601613",
            **overrides,
        }
    )


async def create_payee(
    api: httpx.AsyncClient, user: dict[str, Any], body: dict[str, Any], **headers: str
) -> httpx.Response:
    return await api.post(
        "/api/v2/banking/payees", params={"userId": user["Id"]}, json=body, headers=headers
    )


async def confirm(
    api: httpx.AsyncClient, user: dict[str, Any], payee_id: str, token: str
) -> httpx.Response:
    return await api.post(
        f"/api/v2/banking/payees/{payee_id}/verify",
        params={"userId": user["Id"]},
        json={"VerificationToken": token},
    )


async def pending_payee(
    api: httpx.AsyncClient, user: dict[str, Any], **overrides: Any
) -> dict[str, Any]:
    """Create a payee (SEPA EUR unless overridden; None removes a field) for a banking user;
    returns the 202 body (`PayeeId`, `VerificationToken`, `ExpiresAt`, ...)."""
    response = await create_payee(api, user, payee_body(**overrides))
    assert response.status_code == 202, response.text
    return dict(response.json())


async def verified_payee(
    api: httpx.AsyncClient, user: dict[str, Any], **overrides: Any
) -> dict[str, Any]:
    """Create and verify a payee (SEPA EUR unless overridden) for a banking user; returns the
    payee (`PayeeId`, `Status` `ACTIVE`, ...)."""
    challenge = await pending_payee(api, user, **overrides)
    response = await confirm(api, user, challenge["PayeeId"], challenge["VerificationToken"])
    assert response.status_code == 200, response.text
    payee = dict(response.json())
    assert payee["Status"] == "ACTIVE", payee
    return payee
