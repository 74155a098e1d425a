"""Each company gets a default tier catalogue with card products per provider."""

from __future__ import annotations

import httpx

from tests.conftest import TenantFactory

TIER_FIELDS = {
    "Id",
    "Name",
    "Description",
    "TierLevel",
    "AccountType",
    "MonthlyFee",
    "YearlyFee",
    "Features",
    "IsDefault",
    "IsActive",
    "IncludesBankprovCards",
    "IncludesBankprovIban",
    "CreatedAt",
    "UpdatedAt",
}


async def tiers_of(api: httpx.AsyncClient) -> list[dict]:  # type: ignore[type-arg]
    response = await api.get("/api/v2/tiers")
    assert response.status_code == 200
    return response.json()["Tiers"]  # type: ignore[no-any-return]


async def products_of(api: httpx.AsyncClient, tier_id: int) -> list[dict]:  # type: ignore[type-arg]
    response = await api.get(f"/api/v2/tiers/card-tier/{tier_id}")
    assert response.status_code == 200
    body = response.json()
    assert body["TierId"] == tier_id
    return body["CardProducts"]  # type: ignore[no-any-return]


async def test_tier_has_every_field_of_the_spec(api: httpx.AsyncClient) -> None:
    for tier in await tiers_of(api):
        assert set(tier) == TIER_FIELDS
        assert isinstance(tier["MonthlyFee"], int | float)
        assert isinstance(tier["Features"], list)


async def test_new_company_has_personal_and_business_tiers_with_one_default_each(
    api: httpx.AsyncClient,
) -> None:
    tiers = await tiers_of(api)
    for account_type in ("personal", "business"):
        mine = [t for t in tiers if t["AccountType"] == account_type]
        assert mine
        assert sum(t["IsDefault"] for t in mine) == 1


async def test_default_tiers_cover_with_and_without_bankprov_cards_and_iban(
    api: httpx.AsyncClient,
) -> None:
    tiers = await tiers_of(api)
    assert {t["IncludesBankprovCards"] for t in tiers} == {True, False}
    assert {t["IncludesBankprovIban"] for t in tiers} == {True, False}


async def test_every_tier_offers_virtual_and_physical_cardprov_cards(
    api: httpx.AsyncClient,
) -> None:
    for tier in await tiers_of(api):
        products = await products_of(api, tier["Id"])
        cardprov = {p["CardType"] for p in products if p["Provider"] == "cardprov"}
        assert cardprov == {"VIRTUAL", "PHYSICAL"}


async def test_bankprov_products_only_where_the_tier_includes_bankprov_cards(
    api: httpx.AsyncClient,
) -> None:
    for tier in await tiers_of(api):
        products = await products_of(api, tier["Id"])
        bankprov = {p["CardType"] for p in products if p["Provider"] == "bankprov"}
        assert bankprov == ({"VIRTUAL", "PHYSICAL"} if tier["IncludesBankprovCards"] else set())


async def test_some_tier_offers_switchprov_products_as_provider_type_3(
    api: httpx.AsyncClient,
) -> None:
    switch = [
        p
        for tier in await tiers_of(api)
        for p in await products_of(api, tier["Id"])
        if p["Provider"] == "switchprov"
    ]
    assert switch
    assert {p["ProviderType"] for p in switch} == {3}
    assert {p["CardType"] for p in switch} == {"VIRTUAL", "PHYSICAL"}


async def test_card_product_has_the_contract_fields(api: httpx.AsyncClient) -> None:
    tier = (await tiers_of(api))[0]
    for product in await products_of(api, tier["Id"]):
        assert set(product) == {
            "CardTypeId",
            "Name",
            "CardType",
            "Provider",
            "ProviderType",
            "Currency",
        }
        assert (
            product["ProviderType"]
            == {"cardprov": 1, "bankprov": 2, "switchprov": 3}[product["Provider"]]
        )


async def test_card_products_of_unknown_tier_is_404(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/tiers/card-tier/999999")
    assert response.status_code == 404
    assert response.json()["Code"] == "TIER_NOT_FOUND"


async def test_card_products_of_another_companys_tier_is_404(make_tenant: TenantFactory) -> None:
    a, b = await make_tenant("A"), await make_tenant("B")
    tier_of_a = (await tiers_of(a.client))[0]["Id"]
    response = await b.client.get(f"/api/v2/tiers/card-tier/{tier_of_a}")
    assert response.status_code == 404


async def test_companies_see_only_their_own_tiers(make_tenant: TenantFactory) -> None:
    a, b = await make_tenant("A"), await make_tenant("B")
    ids_a = {t["Id"] for t in await tiers_of(a.client)}
    ids_b = {t["Id"] for t in await tiers_of(b.client)}
    assert ids_a.isdisjoint(ids_b)
