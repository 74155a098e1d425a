"""Another company's business onboarding is out of reach, even from a valid application."""

from __future__ import annotations

import httpx

from tests.business.steps import PEOPLE, business_user, create_application, seed_person, upload
from tests.conftest import Tenant, TenantFactory


async def test_person_of_another_company_is_not_found_from_own_application(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    _, their_person = await seed_person(api)
    other: Tenant = await make_tenant("Other Co")
    own_user = await business_user(other.client)
    await create_application(other.client, own_user)
    response = await upload(
        other.client, f"{PEOPLE}/{their_person}/documents", own_user, "PASSPORT"
    )
    assert response.status_code == 404


async def test_application_of_another_company_is_not_found(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    their_user, _ = await seed_person(api)
    other: Tenant = await make_tenant("Other Co")
    response = await other.client.get(
        "/api/v2/business/onboarding/application", params={"userId": their_user}
    )
    assert response.status_code == 404
