"""Steps of loyalty over HTTP: programmes, merchants with MIDs, card purchases at them."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from tests.cards.transactions.steps import authorize, funded_card, settle

LOYALTY = "/api/v2/loyalty"
AUTO_ASSIGN = "/api/loyalty-programs/auto-assign/card-transaction"


def upload_path(config_id: int) -> str:
    return f"/api/loyalty-programs/transaction-import/upload/{config_id}"


def new_mid() -> str:
    return "MID" + uuid.uuid4().hex[:12].upper()


async def program(api: httpx.AsyncClient, **terms: Any) -> dict[str, Any]:
    body = {"Name": "Coffee rewards", "PointsPerUnit": 2} | terms
    if "PointsPerTransaction" in terms:
        body.pop("PointsPerUnit", None)
        body.setdefault("PointsRule", "PER_TRANSACTION")
    response = await api.post(f"{LOYALTY}/programs", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def merchant(
    api: httpx.AsyncClient, program_id: int, *mids: str, **extra: Any
) -> dict[str, Any]:
    response = await api.post(
        f"{LOYALTY}/merchants",
        json={"Name": "Coffee Shop Soho", "ProgramId": program_id, "Mids": list(mids)} | extra,
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def points(api: httpx.AsyncClient, user_id: int) -> int:
    response = await api.get(f"{LOYALTY}/users/{user_id}/points")
    assert response.status_code == 200, response.text
    return int(response.json()["Points"])


async def cleared_purchase(
    api: httpx.AsyncClient, card: dict[str, Any], amount: float, mid: str | None
) -> dict[str, Any]:
    extra = {} if mid is None else {"Mid": mid}
    held = await authorize(api, card, amount, **extra)
    assert held["Approved"], held
    cleared = await settle(api, card, held["AuthorizationId"], "clear")
    assert cleared.status_code == 200, cleared.text
    return held


async def member_card(api: httpx.AsyncClient) -> dict[str, Any]:
    return await funded_card(api, amount=200)


async def import_config(api: httpx.AsyncClient, program_id: int, **extra: Any) -> dict[str, Any]:
    response = await api.post(
        f"{LOYALTY}/import-configs", json={"Name": "History", "ProgramId": program_id} | extra
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def upload(api: httpx.AsyncClient, config_id: int, text: str) -> httpx.Response:
    return await api.post(
        upload_path(config_id), files=[("File", ("history.csv", text.encode(), "text/csv"))]
    )


def csv_file(*rows: str) -> str:
    return "TransactionId,UserId,Mid,Amount,Currency,OccurredAt\n" + "".join(
        row + "\n" for row in rows
    )
