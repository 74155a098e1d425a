"""Steps of the voucher flows over HTTP."""

from __future__ import annotations

from typing import Any

import httpx

GROUPS = "/api/v2/admin/vouchers/groups"


async def group(api: httpx.AsyncClient, **body: Any) -> dict[str, Any]:
    response = await api.post(GROUPS, json={"Name": "Winter campaign", **body})
    assert response.status_code == 200, response.text
    return dict(response.json())


async def issue(
    api: httpx.AsyncClient, group_id: str, key: str | None = None, **body: Any
) -> list[dict[str, Any]]:
    headers = {"Idempotency-Key": key} if key else {}
    response = await api.post(f"{GROUPS}/{group_id}/vouchers", json=body, headers=headers)
    assert response.status_code == 201, response.text
    return list(response.json()["Vouchers"])


async def voucher(api: httpx.AsyncClient, **terms: Any) -> dict[str, Any]:
    """One voucher of 25 USD (unless `terms` say otherwise) in a new group."""
    made = await group(api)
    (issued,) = await issue(api, made["Id"], **{"Value": 25, "Currency": "USD", **terms})
    return issued


REDEMPTIONS = "/api/v2/vouchers/redemptions"


async def fund_vouchers(api: httpx.AsyncClient, amount: float = 1000.0) -> None:
    """Money arrives in the company's USD voucher funding account (sandbox)."""
    response = await api.post(
        "/api/v2/sandbox/company/funding",
        json={"Currency": "USD", "Amount": amount, "Account": "VOUCHERS"},
    )
    assert response.status_code == 200, response.text


async def start(
    api: httpx.AsyncClient, code: str, card: dict[str, Any], key: str | None = None
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post(
        REDEMPTIONS,
        json={"VoucherCode": code, "UserId": card["UserId"], "CardId": card["Id"]},
        headers=headers,
    )


async def started(api: httpx.AsyncClient, code: str, card: dict[str, Any]) -> dict[str, Any]:
    response = await start(api, code, card)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def sent_code(api: httpx.AsyncClient, redemption_id: str) -> str:
    response = await api.get(f"/api/v2/sandbox/vouchers/redemptions/{redemption_id}/code")
    assert response.status_code == 200, response.text
    return str(response.json()["Code"])


async def verify(
    api: httpx.AsyncClient, redemption_id: str, code: str, key: str | None = None
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post(
        f"{REDEMPTIONS}/{redemption_id}/verify", json={"Code": code}, headers=headers
    )


def wrong(code: str) -> str:
    return f"{(int(code) + 1) % 1_000_000:06d}"
