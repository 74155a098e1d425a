from __future__ import annotations

from datetime import date, timedelta

import httpx
import pytest

from finplat.kit.fields import SAFE_TEXT_FORMAT
from tests.factories import user_payload


async def create(api: httpx.AsyncClient, **overrides: object) -> httpx.Response:
    return await api.post("/api/v2/users", json=user_payload(**overrides))


def assert_invalid_field(response: httpx.Response, field: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["Code"] == "VALIDATION_ERROR"
    assert body["Status"] == 400
    assert field in body["ValidationErrors"], body


async def test_created_user_is_active_with_kyc_not_started(api: httpx.AsyncClient) -> None:
    response = await create(api, ExternalUserId="cust_ada")
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["Status"] == "ACTIVE"
    assert body["KycStatus"] == "NOT_STARTED"
    assert body["ExternalUserId"] == "cust_ada"
    assert isinstance(body["Id"], int)
    assert isinstance(body["CompanyId"], int)
    for field in ("Email", "FirstName", "LastName", "AccountType", "CreatedAt"):
        assert field in body


async def test_created_user_gets_the_default_tier_of_its_account_type(
    api: httpx.AsyncClient,
) -> None:
    tiers = (await api.get("/api/v2/tiers")).json()["Tiers"]
    default_business = next(t for t in tiers if t["AccountType"] == "business" and t["IsDefault"])
    body = (await create(api, AccountType="business")).json()
    assert body["TierId"] == default_business["Id"]


async def test_user_can_be_read_back(api: httpx.AsyncClient) -> None:
    created = (await create(api)).json()
    response = await api.get(f"/api/v2/users/{created['Id']}")
    assert response.status_code == 200
    assert response.json() == created


async def test_duplicate_external_user_id_is_user_already_exists(api: httpx.AsyncClient) -> None:
    assert (await create(api, ExternalUserId="dup")).status_code == 201
    response = await create(api, ExternalUserId="dup", Email="other@example.com")
    assert response.status_code == 409
    assert response.json()["Code"] == "USER_ALREADY_EXISTS"


async def test_same_external_user_id_in_two_companies_is_allowed(make_tenant) -> None:  # type: ignore[no-untyped-def]
    a, b = await make_tenant("A"), await make_tenant("B")
    assert (await create(a.client, ExternalUserId="shared")).status_code == 201
    assert (await create(b.client, ExternalUserId="shared")).status_code == 201


@pytest.mark.parametrize("email", ["not-an-email", "a@", "@example.com", "a b@example.com"])
async def test_invalid_email_is_rejected(api: httpx.AsyncClient, email: str) -> None:
    assert_invalid_field(await create(api, Email=email), "Email")


@pytest.mark.parametrize(
    "phone", ["07911123456", "+44 7911 123456", "+4479", "+999123456789", "phone"]
)
async def test_phone_not_in_valid_e164_is_rejected(api: httpx.AsyncClient, phone: str) -> None:
    assert_invalid_field(await create(api, Phone=phone), "Phone")


@pytest.mark.parametrize("phone", ["07911123456", "+44 7911 123456", "+447911123456\n"])
async def test_a_phone_not_shaped_as_e164_is_refused_with_a_sentence_not_a_pattern(
    api: httpx.AsyncClient, phone: str
) -> None:
    response = await create(api, Phone=phone)
    assert_invalid_field(response, "Phone")
    assert response.json()["ValidationErrors"]["Phone"] == [
        "Must be in E.164 format: '+' then country code and number, no spaces."
    ]


@pytest.mark.parametrize("name", [" Ada", "Ada ", "A\nda", "Ada\u0085"])
async def test_text_beyond_one_clean_line_is_refused_with_a_sentence_not_a_pattern(
    api: httpx.AsyncClient, name: str
) -> None:
    response = await create(api, FirstName=name)
    assert_invalid_field(response, "FirstName")
    assert response.json()["ValidationErrors"]["FirstName"] == [SAFE_TEXT_FORMAT.message]


async def test_valid_e164_phone_is_accepted(api: httpx.AsyncClient) -> None:
    response = await create(api, Phone="+14155552671")
    assert response.status_code == 201
    assert response.json()["Phone"] == "+14155552671"


@pytest.mark.parametrize("dob", ["17/05/1990", "1990-5-17", "1990-02-30", "19900517", 19900517])
async def test_date_of_birth_not_yyyy_mm_dd_is_rejected(
    api: httpx.AsyncClient, dob: object
) -> None:
    assert_invalid_field(await create(api, DateOfBirth=dob), "DateOfBirth")


async def test_date_of_birth_today_or_later_is_rejected(api: httpx.AsyncClient) -> None:
    for day in (date.today(), date.today() + timedelta(days=1)):
        assert_invalid_field(await create(api, DateOfBirth=day.isoformat()), "DateOfBirth")


async def test_date_of_birth_before_1900_is_rejected(api: httpx.AsyncClient) -> None:
    assert_invalid_field(await create(api, DateOfBirth="1899-12-31"), "DateOfBirth")


@pytest.mark.parametrize("country", ["GBR", "G", "ZZ", "12", "United Kingdom"])
async def test_country_not_two_letter_iso_is_rejected(api: httpx.AsyncClient, country: str) -> None:
    assert_invalid_field(await create(api, Country=country), "Country")


async def test_lower_case_country_is_rejected_not_rewritten(api: httpx.AsyncClient) -> None:
    assert_invalid_field(await create(api, Country="de"), "Country")


@pytest.mark.parametrize("account_type", ["Personal", "corporate", "", None])
async def test_account_type_other_than_personal_or_business_is_rejected(
    api: httpx.AsyncClient, account_type: object
) -> None:
    assert_invalid_field(await create(api, AccountType=account_type), "AccountType")


@pytest.mark.parametrize(
    "field",
    [
        "Email",
        "FirstName",
        "LastName",
        "Phone",
        "ExternalUserId",
        "AccountType",
        "DateOfBirth",
        "Country",
    ],
)
async def test_required_field_missing_is_rejected(api: httpx.AsyncClient, field: str) -> None:
    response = await api.post("/api/v2/users", json=user_payload(**{field: ...}))
    assert_invalid_field(response, field)


async def test_empty_external_user_id_is_rejected(api: httpx.AsyncClient) -> None:
    assert_invalid_field(await create(api, ExternalUserId="   "), "ExternalUserId")


@pytest.mark.parametrize("value", [" Ada", "Ada ", "A\nda", "A\x00da", "\u0007"])
async def test_text_with_edge_whitespace_or_control_characters_is_rejected_not_trimmed(
    api: httpx.AsyncClient, value: str
) -> None:
    assert_invalid_field(await create(api, FirstName=value), "FirstName")


async def test_text_with_a_lone_surrogate_is_rejected(api: httpx.AsyncClient) -> None:
    body = b'{"FirstName": "A\\ud800da"}'
    payload = user_payload()
    payload.pop("FirstName")
    raw = body[:-1] + b", " + __import__("json").dumps(payload).encode()[1:]
    response = await api.post(
        "/api/v2/users", content=raw, headers={"content-type": "application/json"}
    )
    assert_invalid_field(response, "FirstName")


async def test_unicode_names_are_accepted(api: httpx.AsyncClient) -> None:
    response = await create(api, FirstName="Zoë 😀", LastName="Ōtsuka-Brontë")
    assert response.status_code == 201
    assert response.json()["FirstName"] == "Zoë 😀"


async def test_unknown_field_is_rejected(api: httpx.AsyncClient) -> None:
    assert_invalid_field(await create(api, Nickname="ada"), "Nickname")


async def test_every_invalid_field_is_reported_at_once(api: httpx.AsyncClient) -> None:
    response = await create(api, Email="x", Phone="1", Country="ZZ")
    assert set(response.json()["ValidationErrors"]) == {"Email", "Phone", "Country"}


async def test_rejected_user_is_not_stored(api: httpx.AsyncClient) -> None:
    await create(api, ExternalUserId="never", Email="bad")
    listing = await api.get("/api/v2/users", params={"externalUserId": "never"})
    assert listing.json()["Items"] == []
