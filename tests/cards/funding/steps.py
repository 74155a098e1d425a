"""Steps of the card funding flows over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select, update

from finplat.cards.models import Card
from finplat.providers.cards.sandbox.models import SandboxCardprovCard
from tests.cards.steps import approved_card_user, ordered_card


@contextmanager
def route_only(app: FastAPI) -> Iterator[None]:
    """Top-ups go to the route while inside (no batches). (Not `monkeypatch`: it cannot see an
    attribute of Starlette's `State` to put it back.)"""
    kept = app.state.topup_batches
    app.state.topup_batches = None
    try:
        yield
    finally:
        app.state.topup_batches = kept


async def fund_master(api: httpx.AsyncClient, amount: float = 10_000.0) -> None:
    """Money arrives in the company's USD master account (sandbox)."""
    response = await api.post(
        "/api/v2/sandbox/company/funding", json={"Currency": "USD", "Amount": amount}
    )
    assert response.status_code == 200, response.text


async def master_available(api: httpx.AsyncClient) -> Decimal:
    response = await api.get("/api/v2/company/balances")
    assert response.status_code == 200, response.text
    usd = [b for b in response.json()["Balances"] if b["Currency"] == "USD"]
    return Decimal(str(usd[0]["Available"])) if usd else Decimal(0)


async def active_card(api: httpx.AsyncClient, master: float = 10_000.0) -> dict[str, Any]:
    """An ACTIVE virtual card-provider card of a new user; the master account holds `master`."""
    user = await approved_card_user(api)
    card = await ordered_card(api, user)
    if master:
        await fund_master(api, master)
    return card


async def topup(
    api: httpx.AsyncClient,
    card: dict[str, Any],
    value: float | int | str,
    key: str | None = None,
    currency: str = "USD",
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post(
        "/api/v2/cards/topup",
        json={"CardId": card["Id"], "Token": currency, "Value": value},
        headers=headers,
    )


async def unload(
    api: httpx.AsyncClient, card: dict[str, Any], value: float | int, key: str | None = None
) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key else {}
    return await api.post(
        "/api/v2/cards/unload-card",
        json={"CardId": card["Id"], "Currency": "USD", "Value": value},
        headers=headers,
    )


async def card_balance(api: httpx.AsyncClient, card: dict[str, Any]) -> Decimal:
    response = await api.get(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})
    assert response.status_code == 200, response.text
    return Decimal(str(response.json()["AvailableBalance"]))


async def set_auto_topup(
    api: httpx.AsyncClient, card: dict[str, Any], rule: str, **terms: Any
) -> httpx.Response:
    """Set the card's auto top-up `rule` (`low-balance`, `failed-tx` or `deposit`), enabled
    unless `Enabled` says otherwise."""
    return await api.post(
        f"/api/v2/cards/auto-topup/{rule}",
        params={"userId": card["UserId"]},
        json={"CardId": card["Id"], "Enabled": True, **terms},
    )


async def auto_topup_settings(api: httpx.AsyncClient, card: dict[str, Any]) -> dict[str, Any]:
    """The card's auto top-up rules and the current month's automatic top-ups."""
    response = await api.get(
        f"/api/v2/cards/{card['Id']}/auto-topup", params={"userId": card["UserId"]}
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def set_fees(api: httpx.AsyncClient, card: dict[str, Any], **fees: float) -> None:
    tier_id = card["TierId"]
    body = {
        "TopupFeePercentage": 0,
        "TopupFixedFee": 0,
        "UnloadFeePercentage": 0,
        "UnloadFixedFee": 0,
        "DeclineFee": 0,
        **fees,
    }
    response = await api.put(f"/api/v2/cards/fee-schedules/{tier_id}", json=body)
    assert response.status_code == 200, response.text


async def purchase(
    api: httpx.AsyncClient, card: dict[str, Any], amount: float, merchant: str = "Coffee Shop"
) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": card["UserId"]},
        json={"Amount": amount, "Currency": "USD", "Merchant": merchant},
    )
    assert response.status_code == 200, response.text
    answer = dict(response.json())
    if answer["Approved"]:
        # The merchant clears at once: the purchase is paid, not only held.
        cleared = await api.post(
            f"/api/v2/sandbox/cards/{card['Id']}/authorizations/{answer['AuthorizationId']}/clear",
            params={"userId": card["UserId"]},
        )
        assert cleared.status_code == 200, cleared.text
    return answer


async def spent_unseen(app: FastAPI, card: dict[str, Any], minor: int) -> None:
    """The card provider takes money off the card without the platform hearing of it yet (a
    purchase whose notice is still on its way): the provider then holds less than the ledger."""
    async with app.state.session_factory() as session, session.begin():
        reference = (
            await session.execute(select(Card.provider_card_id).where(Card.id == card["Id"]))
        ).scalar_one()
        await session.execute(
            update(SandboxCardprovCard)
            .where(SandboxCardprovCard.card_id == reference)
            .values(balance_minor=SandboxCardprovCard.balance_minor - minor)
        )
