"""Creating and reading the business application: eligibility, one per user, markets."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.business.models import BusinessApplication
from tests.business.steps import (
    APPLICATION,
    application_payload,
    business_user,
    create_application,
)
from tests.onboarding import approved_user, create_user


async def test_a_new_application_is_a_draft_with_the_lower_case_shape(
    api: httpx.AsyncClient,
) -> None:
    user_id = await business_user(api)
    body = await create_application(api, user_id)
    assert set(body) == {
        "id",
        "status",
        "accountId",
        "market",
        "type",
        "registeredName",
        "registrationNumber",
        "countryOfIncorporation",
        "createdAt",
    }
    assert body["status"] == "draft"
    assert body["accountId"] is None
    assert (body["market"], body["type"]) == ("UK", "LIMITED_COMPANY")
    assert (body["registeredName"], body["registrationNumber"]) == (
        "Analytical Engines Ltd",
        "09876543",
    )


async def test_the_business_type_is_the_businesss_own_words(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    body = await create_application(
        api, user_id, BusinessType="Gesellschaft mit beschränkter Haftung"
    )
    assert body["type"] == "Gesellschaft mit beschränkter Haftung"


async def test_a_business_type_longer_than_64_characters_is_refused(
    api: httpx.AsyncClient,
) -> None:
    user_id = await business_user(api)
    response = await api.post(
        APPLICATION, params={"userId": user_id}, json=application_payload(BusinessType="x" * 65)
    )
    assert response.status_code == 400
    assert list(response.json()["ValidationErrors"]) == ["BusinessType"]


async def test_get_returns_the_application(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    created = await create_application(api, user_id)
    response = await api.get(APPLICATION, params={"userId": user_id})
    assert response.status_code == 200
    assert response.json() == created


async def test_get_without_an_application_is_404(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    response = await api.get(APPLICATION, params={"userId": user_id})
    assert (response.status_code, response.json()["Code"]) == (
        404,
        "BUSINESS_APPLICATION_NOT_FOUND",
    )


async def test_a_personal_user_cannot_apply(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)
    response = await api.post(
        APPLICATION, params={"userId": user["Id"]}, json=application_payload()
    )
    assert (response.status_code, response.json()["Code"]) == (409, "NOT_A_BUSINESS_USER")


async def test_base_kyc_must_be_approved(api: httpx.AsyncClient) -> None:
    user = await create_user(api, AccountType="business")
    response = await api.post(
        APPLICATION, params={"userId": user["Id"]}, json=application_payload()
    )
    assert (response.status_code, response.json()["Code"]) == (409, "KYC_NOT_APPROVED")


async def test_an_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    response = await api.post(APPLICATION, params={"userId": 987654321}, json=application_payload())
    assert (response.status_code, response.json()["Code"]) == (404, "USER_NOT_FOUND")


async def test_a_second_application_is_refused(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    await create_application(api, user_id)
    response = await api.post(
        APPLICATION, params={"userId": user_id}, json=application_payload(Market="EU")
    )
    assert (response.status_code, response.json()["Code"]) == (409, "BUSINESS_APPLICATION_EXISTS")


@pytest.mark.parametrize("market", ["UK", "EU"])
async def test_uk_and_eu_markets_are_accepted(api: httpx.AsyncClient, market: str) -> None:
    user_id = await business_user(api)
    body = await create_application(api, user_id, Market=market)
    assert body["market"] == market


@pytest.mark.parametrize("market", ["US", "UP"])
async def test_us_and_up_markets_are_refused_with_a_clear_message(
    api: httpx.AsyncClient, market: str
) -> None:
    user_id = await business_user(api)
    response = await api.post(
        APPLICATION, params={"userId": user_id}, json=application_payload(Market=market)
    )
    assert response.status_code == 400
    assert response.json()["ValidationErrors"]["Market"] == [
        f"Market {market} is not offered for business onboarding: use UK or EU."
    ]


async def test_market_is_inferred_as_uk_from_gb(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    body = await create_application(api, user_id, Market=..., CountryOfIncorporation="GB")
    assert body["market"] == "UK"


async def test_market_is_inferred_as_eu_from_an_eu_member_state(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    body = await create_application(api, user_id, Market=..., CountryOfIncorporation="DE")
    assert body["market"] == "EU"


async def test_a_country_outside_uk_and_eu_needs_a_market(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    response = await api.post(
        APPLICATION,
        params={"userId": user_id},
        json=application_payload(Market=..., CountryOfIncorporation="US"),
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "VALIDATION_ERROR"


async def test_supplied_market_and_country_are_kept_as_sent(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user_id = await business_user(api)
    body = await create_application(api, user_id, Market="EU", CountryOfIncorporation="GB")
    assert (body["market"], body["countryOfIncorporation"]) == ("EU", "GB")
    async with session_factory() as db:
        stored = (
            await db.execute(
                select(BusinessApplication).where(BusinessApplication.id == body["id"])
            )
        ).scalar_one()
    assert (stored.market, stored.country_of_incorporation) == ("EU", "GB")


async def test_the_document_states_that_a_market_must_be_decidable(
    api: httpx.AsyncClient,
) -> None:
    document = (await api.get("/openapi.json")).json()
    schema = document["components"]["schemas"]["BusinessApplicationCreate"]
    branches = schema["anyOf"]
    assert {"required": ["Market"], "properties": {"Market": {"enum": ["UK", "EU"]}}} in branches
    country = next(b for b in branches if b["required"] == ["CountryOfIncorporation"])
    assert set(country["properties"]["CountryOfIncorporation"]["enum"]) >= {"GB", "DE", "FR"}
    assert "US" not in country["properties"]["CountryOfIncorporation"]["enum"]
