"""The legacy-compatible operations: their errors are problem details."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI

from finplat.http.routing import CurrentPrincipal, api_router
from tests.cards.transactions.steps import authorize, settle
from tests.conftest import Tenant
from tests.loyalty.steps import (
    AUTO_ASSIGN,
    cleared_purchase,
    member_card,
    merchant,
    new_mid,
    points,
    program,
    upload_path,
)

PROBLEM_FIELDS = {"type", "title", "detail", "instance", "status"}


def assert_problem(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert set(body) >= PROBLEM_FIELDS
    assert (body["status"], body["code"], body["instance"]) == (
        status,
        code,
        response.request.url.path,
    )
    assert not {"Code", "Message"} & set(body)
    return body


async def test_auto_assign_gives_a_purchase_without_mid_to_the_named_programme(
    api: httpx.AsyncClient,
) -> None:
    owner = await program(api, PointsPerUnit=1)
    card = await member_card(api)
    held = await cleared_purchase(api, card, 30, None)
    response = await api.post(
        AUTO_ASSIGN, json={"CardTransactionId": held["CardTransactionId"], "ProgramId": owner["Id"]}
    )
    assert response.status_code == 200, response.text
    award = response.json()
    assert (award["ProgramId"], award["Points"], award["Source"]) == (owner["Id"], 30, "ASSIGNED")
    assert await points(api, card["UserId"]) == 30


async def test_auto_assign_twice_answers_the_same_award_and_awards_once(
    api: httpx.AsyncClient,
) -> None:
    owner = await program(api, PointsPerUnit=1)
    card = await member_card(api)
    held = await cleared_purchase(api, card, 30, None)
    body = {"CardTransactionId": held["CardTransactionId"], "ProgramId": owner["Id"]}
    first = (await api.post(AUTO_ASSIGN, json=body)).json()
    second = (await api.post(AUTO_ASSIGN, json=body)).json()
    assert first == second
    assert await points(api, card["UserId"]) == 30


async def test_auto_assign_without_programme_follows_the_mid(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    mid = new_mid()
    shop = await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    held = await cleared_purchase(api, card, 10, mid)
    response = await api.post(AUTO_ASSIGN, json={"CardTransactionId": held["CardTransactionId"]})
    assert response.status_code == 200, response.text
    assert (response.json()["MerchantId"], response.json()["Points"]) == (shop["Id"], 20)
    assert await points(api, card["UserId"]) == 20


async def test_auto_assign_of_an_assigned_purchase_to_another_programme_is_a_problem(
    api: httpx.AsyncClient,
) -> None:
    owner, other = await program(api), await program(api, Name="Other")
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    held = await cleared_purchase(api, card, 10, mid)
    response = await api.post(
        AUTO_ASSIGN, json={"CardTransactionId": held["CardTransactionId"], "ProgramId": other["Id"]}
    )
    assert_problem(response, 409, "ALREADY_ASSIGNED")
    assert await points(api, card["UserId"]) == 20


async def test_auto_assign_of_a_purchase_matching_no_merchant_is_a_problem(
    api: httpx.AsyncClient,
) -> None:
    card = await member_card(api)
    held = await cleared_purchase(api, card, 10, new_mid())
    response = await api.post(AUTO_ASSIGN, json={"CardTransactionId": held["CardTransactionId"]})
    body = assert_problem(response, 409, "NO_MATCHING_MERCHANT")
    assert body["type"] == "urn:finplat:problem:no-matching-merchant"


async def test_auto_assign_of_an_unknown_transaction_is_a_404_problem(
    api: httpx.AsyncClient,
) -> None:
    response = await api.post(AUTO_ASSIGN, json={"CardTransactionId": 987654321})
    assert_problem(response, 404, "CARD_TRANSACTION_NOT_FOUND")


async def test_auto_assign_with_bad_fields_is_a_400_problem_naming_them(
    api: httpx.AsyncClient,
) -> None:
    response = await api.post(AUTO_ASSIGN, json={"CardTransactionId": "x", "Surprise": 1})
    body = assert_problem(response, 400, "VALIDATION_ERROR")
    assert set(body["errors"]) == {"CardTransactionId", "Surprise"}


async def test_a_legacy_call_without_api_key_is_a_401_problem(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.post(upload_path(1), files=[("File", ("a.csv", b"x"))])
    assert_problem(response, 401, "UNAUTHORIZED")


async def test_an_assigned_purchase_earns_when_it_clears_later(api: httpx.AsyncClient) -> None:
    owner = await program(api, PointsPerUnit=1)
    card = await member_card(api)
    held = await authorize(api, card, 10)
    body = {"CardTransactionId": held["CardTransactionId"], "ProgramId": owner["Id"]}
    assert (await api.post(AUTO_ASSIGN, json=body)).json()["Points"] == 0
    await settle(api, card, held["AuthorizationId"], "clear")
    assert await points(api, card["UserId"]) == 10


async def test_other_routes_keep_the_standard_error_body(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/loyalty/programs/987654321")
    assert response.headers["content-type"] == "application/json"
    assert response.json()["Code"] == "LOYALTY_PROGRAM_NOT_FOUND"


async def test_an_unexpected_failure_on_a_legacy_route_is_a_500_problem(
    app: FastAPI, tenant: Tenant
) -> None:
    router = api_router()

    @router.post("/api/loyalty-programs/test-failure")
    async def failing(principal: CurrentPrincipal) -> dict[str, str]:
        raise RuntimeError("boom")

    app.include_router(router)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://finplat.test", headers=tenant.client.headers
    ) as client:
        response = await client.post("/api/loyalty-programs/test-failure")
    body = assert_problem(response, 500, "INTERNAL_ERROR")
    assert "boom" not in response.text
    assert body["detail"].startswith("An unexpected error occurred.")
