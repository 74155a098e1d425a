"""Request binding (DESIGN.md, "Request binding, everywhere"): property names match
case-insensitively in every request body, nested objects and multipart forms included; a name
sent twice in any case is 400 `DUPLICATE_FIELD`; unknown names stay 400; responses and the
OpenAPI document keep the spec's spelling."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from finplat.cards.schemas import CardOrder
from finplat.kit.schemas import FieldNames
from tests.cards.steps import ADDRESS, approved_card_user, ordered_card
from tests.http.test_errors import assert_standard
from tests.onboarding import create_user


async def tier_id(api: httpx.AsyncClient) -> int:
    tiers = (await api.get("/api/v2/tiers")).json()["Tiers"]
    return int(next(t["Id"] for t in tiers if t["Name"] == "Personal Plus"))


@pytest.mark.parametrize("name", ["TierId", "tierId", "tierid", "TIERID"])
async def test_a_property_name_binds_in_any_letter_case(api: httpx.AsyncClient, name: str) -> None:
    user = await create_user(api)
    wanted = await tier_id(api)
    response = await api.post(f"/api/v2/users/{user['Id']}/tier", json={name: wanted})
    assert response.status_code == 200, response.text
    assert response.json()["TierId"] == wanted


async def test_a_response_keeps_the_spec_spelling_whatever_the_request_used(
    api: httpx.AsyncClient,
) -> None:
    user = await create_user(api)
    wanted = await tier_id(api)
    response = await api.post(f"/api/v2/users/{user['Id']}/tier", json={"tierid": wanted})
    assert response.status_code == 200, response.text
    assert "TierId" in response.json()
    assert "tierid" not in response.json()


async def test_a_name_sent_twice_in_different_cases_is_duplicate_field(
    api: httpx.AsyncClient,
) -> None:
    user = await create_user(api)
    body = assert_standard(
        await api.post(f"/api/v2/users/{user['Id']}/tier", json={"TierId": 1, "tierid": 2}),
        400,
        "DUPLICATE_FIELD",
    )
    assert list(body["ValidationErrors"]) == ["TierId"]


async def test_an_unknown_name_is_still_refused(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    body = assert_standard(
        await api.post(f"/api/v2/users/{user['Id']}/tier", json={"TierId": 1, "Tier": 1}),
        400,
        "VALIDATION_ERROR",
    )
    assert body["ValidationErrors"] == {"Tier": ["Unknown field."]}


async def test_a_nested_object_binds_its_names_in_any_case(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    address = {name.upper(): value for name, value in ADDRESS.items()}
    card = await ordered_card(
        api, user, card_type="PHYSICAL", produced=False, DeliveryAddress=address
    )
    assert card["CardType"] == "PHYSICAL"


def test_a_nested_name_sent_twice_is_named_with_its_path() -> None:
    body: dict[str, Any] = {
        "UserId": 1,
        "CardTypeId": 1,
        "Phone": "+447911123456",
        "DeliveryAddress": {**ADDRESS, "city": "Paris"},
    }
    with pytest.raises(ValidationError) as raised:
        CardOrder.model_validate(body)
    [error] = raised.value.errors()
    assert (error["type"], error["loc"], error["ctx"]) == (
        "duplicate_field",
        ("DeliveryAddress",),
        {"fields": ["City"]},
    )


async def test_a_nested_duplicate_answers_with_the_dotted_field(api: httpx.AsyncClient) -> None:
    user = await approved_card_user(api)
    body = {
        "UserId": user["Id"],
        "CardTypeId": 1,
        "Phone": "+447911123456",
        "DeliveryAddress": {**ADDRESS, "CITY": "Paris"},
    }
    answer = assert_standard(await api.post("/api/v2/cards", json=body), 400, "DUPLICATE_FIELD")
    assert list(answer["ValidationErrors"]) == ["DeliveryAddress.City"]


@pytest.mark.parametrize("name", ["enabled", "Enabled", "ENABLED"])
async def test_auto_lock_takes_enabled_in_any_case(api: httpx.AsyncClient, name: str) -> None:
    card = await ordered_card(api, await approved_card_user(api))
    response = await api.put(
        f"/api/v2/cards/{card['Id']}/auto-lock",
        params={"userId": card["UserId"]},
        json={name: True},
    )
    assert response.status_code == 200, response.text
    assert response.json()["AutoLockEnabled"] is True


def test_only_ascii_letters_fold() -> None:
    # The Kelvin sign lower-cases to "k" in Python; no client means KycStatus by it.
    names = FieldNames(["KycStatus"])
    assert names.wire_name("kycstatus") == "KycStatus"
    assert names.wire_name("\u212aycStatus") == "\u212aycStatus"


async def test_the_document_keeps_canonical_names_and_says_they_match_in_any_case(
    api: httpx.AsyncClient,
) -> None:
    document = (await api.get("/openapi.json")).json()
    auto_lock = document["components"]["schemas"]["AutoLockBody"]
    assert list(auto_lock["properties"]) == ["enabled"]
    assert "case-insensitively" in document["info"]["description"]
