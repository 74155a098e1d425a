"""Card top-ups: limits, fees, response, idempotency, cancelled cards."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest

from tests.cards.funding.steps import (
    active_card,
    card_balance,
    master_available,
    set_fees,
    topup,
)
from tests.conftest import TenantFactory


@pytest.mark.parametrize("value", [4.99, 250000.01, 0, -5])
async def test_topup_outside_5_to_250000_usd_is_invalid_amount(
    api: httpx.AsyncClient, value: float
) -> None:
    card = await active_card(api)
    response = await topup(api, card, value)
    assert response.status_code == 400, response.text
    assert response.json()["Code"] == "INVALID_AMOUNT"


async def test_topup_with_a_fraction_of_a_cent_far_down_is_invalid_amount_never_rounded(
    api: httpx.AsyncClient,
) -> None:
    card = await active_card(api)
    response = await api.post(
        "/api/v2/cards/topup",
        content=b'{"CardId": %d, "Token": "USD", "Value": 100.000000000000000000000000001}'
        % card["Id"],
        headers={"content-type": "application/json", "Idempotency-Key": "far-down"},
    )
    assert response.status_code == 400, response.text
    assert response.json()["Code"] == "INVALID_AMOUNT"


async def test_topup_value_as_a_decimal_string_is_taken_exactly(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    response = await api.post(
        "/api/v2/cards/topup", json={"CardId": card["Id"], "Token": "USD", "Value": "10.00"}
    )
    assert response.status_code == 200, response.text
    assert Decimal(str(response.json()["Value"])) == Decimal("10.00")
    assert await card_balance(api, card) == Decimal("9.90")  # the default fee, 1 %


async def test_topup_value_string_with_a_fraction_of_a_cent_is_invalid_amount(
    api: httpx.AsyncClient,
) -> None:
    card = await active_card(api)
    response = await topup(api, card, "10.001")
    assert (response.status_code, response.json()["Code"]) == (400, "INVALID_AMOUNT")


@pytest.mark.parametrize("value", ["1e3", " 10", "10,00", "NaN", "Infinity"])
async def test_topup_value_string_that_is_not_a_plain_decimal_is_refused(
    api: httpx.AsyncClient, value: str
) -> None:
    card = await active_card(api)
    response = await topup(api, card, value)
    assert (response.status_code, response.json()["Code"]) == (400, "VALIDATION_ERROR")
    assert list(response.json()["ValidationErrors"]) == ["Value"]


async def test_topup_at_both_bounds_is_accepted(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=260_000.0)
    assert (await topup(api, card, 5)).status_code == 200
    assert (await topup(api, card, 250000)).status_code == 200


async def test_topup_schema_states_the_bounds(api: httpx.AsyncClient) -> None:
    schema = (await api.get("/openapi.json")).json()["components"]["schemas"]["TopupRequest"]
    value = schema["properties"]["Value"]
    assert value["minimum"] == 5.0
    assert value["maximum"] == 250000.0


async def test_configuration_reports_the_same_limits_and_the_tier_fee(
    api: httpx.AsyncClient,
) -> None:
    card = await active_card(api)
    await set_fees(api, card, TopupFeePercentage=2.5, TopupFixedFee=0.3)
    response = await api.get("/api/v2/cards/topup/configuration", params={"cardId": card["Id"]})
    assert response.status_code == 200, response.text
    assert response.json() == {
        "Token": "USD",
        "Minimum": 5.0,
        "Maximum": 250000.0,
        "FeePercentage": 2.5,
        "FixedFee": 0.3,
    }


async def test_topup_response_fields_and_money_movement(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=1000.0)
    await set_fees(api, card, TopupFeePercentage=1.5, TopupFixedFee=0.25)
    response = await topup(api, card, 100.01)
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"Success", "OrderId", "Token", "Value", "Fee", "Message", "CreatedAt"}
    # 1.5 % of 100.01 = 1.50015 -> 1.51 (rounded up), + 0.25 fixed
    assert body["Success"] is True
    assert body["Token"] == "USD"
    assert Decimal(str(body["Value"])) == Decimal("100.01")
    assert Decimal(str(body["Fee"])) == Decimal("1.76")
    assert await card_balance(api, card) == Decimal("98.25")
    assert await master_available(api) == Decimal("899.99")


async def test_topup_with_the_same_key_is_replayed_once(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=1000.0)
    first = await topup(api, card, 50, key="topup-1")
    again = await topup(api, card, 50, key="topup-1")
    assert first.status_code == again.status_code == 200
    assert again.json() == first.json()
    assert await master_available(api) == Decimal("950")
    assert await card_balance(api, card) == Decimal("49.5")  # default fee 1 %


async def test_topup_beyond_the_master_balance_is_a_409(api: httpx.AsyncClient) -> None:
    card = await active_card(api, master=10.0)
    response = await topup(api, card, 20)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"
    assert await card_balance(api, card) == 0


async def test_cancelled_card_accepts_no_money(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    cancelled = await api.delete(f"/api/v2/cards/{card['Id']}", params={"userId": card["UserId"]})
    assert cancelled.status_code == 200, cancelled.text
    response = await topup(api, card, 10)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "CARD_CANCELLED"
    assert await master_available(api) == Decimal("10000")


async def test_unknown_card_is_not_found(api: httpx.AsyncClient) -> None:
    response = await topup(api, {"Id": 999_999}, 10)
    assert response.status_code == 404, response.text
    assert response.json()["Code"] == "CARD_NOT_FOUND"


async def test_card_of_another_company_is_not_found(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    card = await active_card(api)
    other = await make_tenant()
    response = await topup(other.client, card, 10)
    assert response.status_code == 404, response.text


async def test_a_fee_percentage_with_more_than_four_decimals_is_invalid(
    api: httpx.AsyncClient,
) -> None:
    card = await active_card(api)
    body = {
        "TopupFeePercentage": 1.5,
        "TopupFixedFee": 0,
        "UnloadFeePercentage": 2.2e-311,
        "UnloadFixedFee": 0,
        "DeclineFee": 0,
    }
    response = await api.put(f"/api/v2/cards/fee-schedules/{card['TierId']}", json=body)
    assert response.status_code == 400, response.text
    assert "UnloadFeePercentage" in response.json()["ValidationErrors"]
