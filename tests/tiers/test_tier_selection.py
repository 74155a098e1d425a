"""POST /api/v2/users/{userId}/tier: the tier must be active and match the AccountType."""

from __future__ import annotations

import httpx
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.tiers.models import Tier
from tests.conftest import TenantFactory
from tests.factories import user_payload


async def new_user(api: httpx.AsyncClient, account_type: str = "personal") -> dict:  # type: ignore[type-arg]
    response = await api.post("/api/v2/users", json=user_payload(AccountType=account_type))
    assert response.status_code == 201
    return response.json()  # type: ignore[no-any-return]


async def tier_named(api: httpx.AsyncClient, name: str) -> dict:  # type: ignore[type-arg]
    tiers = (await api.get("/api/v2/tiers")).json()["Tiers"]
    return next(t for t in tiers if t["Name"] == name)


async def test_user_can_select_an_active_tier_of_its_account_type(api: httpx.AsyncClient) -> None:
    user = await new_user(api)
    plus = await tier_named(api, "Personal Plus")
    response = await api.post(f"/api/v2/users/{user['Id']}/tier", json={"TierId": plus["Id"]})
    assert response.status_code == 200, response.text
    assert response.json()["TierId"] == plus["Id"]
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["TierId"] == plus["Id"]


async def test_tier_of_other_account_type_is_rejected(api: httpx.AsyncClient) -> None:
    user = await new_user(api, "personal")
    business = await tier_named(api, "Business Pro")
    response = await api.post(f"/api/v2/users/{user['Id']}/tier", json={"TierId": business["Id"]})
    assert response.status_code == 409
    assert response.json()["Code"] == "TIER_ACCOUNT_TYPE_MISMATCH"
    assert (await api.get(f"/api/v2/users/{user['Id']}")).json()["TierId"] == user["TierId"]


async def test_inactive_tier_is_rejected(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await new_user(api)
    premium = await tier_named(api, "Personal Premium")
    async with session_factory() as session:
        await session.execute(update(Tier).where(Tier.id == premium["Id"]).values(is_active=False))
        await session.commit()
    response = await api.post(f"/api/v2/users/{user['Id']}/tier", json={"TierId": premium["Id"]})
    assert response.status_code == 409
    assert response.json()["Code"] == "TIER_NOT_ACTIVE"


async def test_unknown_tier_is_404(api: httpx.AsyncClient) -> None:
    user = await new_user(api)
    response = await api.post(f"/api/v2/users/{user['Id']}/tier", json={"TierId": 987654})
    assert response.status_code == 404
    assert response.json()["Code"] == "TIER_NOT_FOUND"


async def test_another_companys_tier_is_404(make_tenant: TenantFactory) -> None:
    a, b = await make_tenant("A"), await make_tenant("B")
    user = await new_user(a.client)
    tier_of_b = await tier_named(b.client, "Personal Plus")
    response = await a.client.post(
        f"/api/v2/users/{user['Id']}/tier", json={"TierId": tier_of_b["Id"]}
    )
    assert response.status_code == 404


async def test_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    plus = await tier_named(api, "Personal Plus")
    response = await api.post("/api/v2/users/987654/tier", json={"TierId": plus["Id"]})
    assert response.status_code == 404
    assert response.json()["Code"] == "USER_NOT_FOUND"


async def test_missing_or_invalid_tier_id_is_400(api: httpx.AsyncClient) -> None:
    user = await new_user(api)
    for body in ({}, {"TierId": "abc"}, {"TierId": 0}, {"TierId": -3}):
        response = await api.post(f"/api/v2/users/{user['Id']}/tier", json=body)
        assert response.status_code == 400, body
        assert "TierId" in response.json()["ValidationErrors"]
