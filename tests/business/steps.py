"""Steps of business onboarding over HTTP, shared by the business tests."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.config import Settings
from finplat.providers.sandbox import delivery as sandbox_delivery
from tests.documents import samples
from tests.onboarding import approved_user

APPLICATION = "/api/v2/business/onboarding/application"
COMPLIANCE = "/api/v2/business/onboarding/compliance/requirements"
PEOPLE = "/api/v2/business/onboarding/associated-people"


def application_payload(**overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "Market": "UK",
        "BusinessType": "LIMITED_COMPANY",
        "CountryOfIncorporation": "GB",
        "RegisteredName": "Analytical Engines Ltd",
        "RegistrationNumber": "09876543",
        "BusinessOverview": "Design and sale of calculating machines.",
        "IndustryMain": "Manufacturing",
        "IndustrySub": "Office machinery",
        "EmployeeCount": 12,
        "IncorporationDate": "2015-03-02",
        "Website": "https://example.com",
    }
    payload.update(overrides)
    return {k: v for k, v in payload.items() if v is not ...}


def compliance_payload(**overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "BusinessType": "LIMITED_COMPANY",
        "Country": "GB",
        "TaxId": "GB123456789",
        "IncorporationDate": "2015-03-02T00:00:00Z",
        "Addresses": [
            {
                "Type": "REGISTERED",
                "AddressLine1": "12 Analytical Row",
                "City": "London",
                "PostalCode": "N1 9GU",
                "Country": "GB",
            }
        ],
        "PaymentCountries": ["GB", "FR"],
        "Compliance": {"SourceOfFunds": "Trading revenue", "RegulatedActivity": False},
    }
    payload.update(overrides)
    return payload


def person_payload(**overrides: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "FirstName": "Charles",
        "LastName": "Babbage",
        "Email": "charles@example.com",
        "Role": "DIRECTOR",
        "OwnershipPercentage": 25.5,
        "DateOfBirth": "1971-12-26",
        "Nationality": "GB",
    }
    payload.update(overrides)
    return payload


async def business_user(api: httpx.AsyncClient) -> int:
    """A business user whose base identity verification is approved."""
    user = await approved_user(api, AccountType="business")
    return int(user["Id"])


async def create_application(api: httpx.AsyncClient, user_id: int, **overrides: Any) -> Any:
    response = await api.post(
        APPLICATION, params={"userId": user_id}, json=application_payload(**overrides)
    )
    assert response.status_code == 200, response.text
    return response.json()


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


async def ready_to_submit(api: httpx.AsyncClient) -> int:
    """A business user with a draft application, compliance requirements and a person."""
    user_id = await business_user(api)
    await create_application(api, user_id)
    await ok(await api.post(COMPLIANCE, params={"userId": user_id}, json=compliance_payload()))
    await ok(await api.post(PEOPLE, params={"userId": user_id}, json=person_payload()), 201)
    return user_id


async def upload(
    api: httpx.AsyncClient,
    path: str,
    user_id: int,
    document_type: str,
    data: bytes | None = None,
    filename: str = "document.pdf",
) -> httpx.Response:
    return await api.post(
        path,
        params={"userId": user_id},
        data={"DocumentType": document_type},
        files={"File": (filename, samples.pdf() if data is None else data)},
    )


async def deliver_callbacks(
    session_factory: async_sessionmaker[AsyncSession], settings: Settings, company_id: int
) -> int:
    """What the background job does: send the sandbox provider's due callbacks."""
    return await sandbox_delivery.deliver_due(
        session_factory, secret=settings.provider_callback_secret, company_id=company_id
    )


async def events_of(api: httpx.AsyncClient, type_: str) -> list[dict[str, Any]]:
    """The company's events of one type, oldest first, through the events API."""
    response = await api.get("/api/v2/events", params={"type": type_, "pageSize": 100})
    assert response.status_code == 200, response.text
    return sorted(response.json()["Items"], key=lambda event: event["Timestamp"])


async def seed_person(api: httpx.AsyncClient) -> tuple[int, int]:
    """An associated person on a new business user's draft application: (user, person)."""
    user_id = await business_user(api)
    await create_application(api, user_id)
    person = await ok(
        await api.post(PEOPLE, params={"userId": user_id}, json=person_payload()), 201
    )
    return user_id, int(person["Id"])
