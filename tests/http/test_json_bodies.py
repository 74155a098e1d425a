"""Ambiguous input is refused, never guessed: keys given twice, bodies that are not UTF-8
JSON, and two API keys."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import Tenant
from tests.factories import user_payload

JSON = {"content-type": "application/json"}


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, object]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["Code"] == code
    assert set(body) == {"Message", "Code", "Status", "ValidationErrors", "Details"}
    return dict(body)


async def test_a_key_given_twice_is_400_duplicate_field_naming_it(api: httpx.AsyncClient) -> None:
    body = b'{"Email": "a@example.com", "Email": "b@example.com"}'
    error = assert_error(
        await api.post("/api/v2/users", content=body, headers=JSON), 400, "DUPLICATE_FIELD"
    )
    assert error["ValidationErrors"] == {"Email": ["Given more than once."]}
    assert "Email" in str(error["Message"])


@pytest.mark.parametrize(
    "body",
    [
        b'{"CardId": 1, "Token": "USD", "Value": 100000, "Value": 5}',
        b'{"CardId": 999, "CardId": 1, "Token": "USD", "Value": 10}',
    ],
)
async def test_a_top_up_with_a_key_given_twice_is_refused(
    api: httpx.AsyncClient, body: bytes
) -> None:
    response = await api.post(
        "/api/v2/cards/topup", content=body, headers={**JSON, "Idempotency-Key": "dup-1"}
    )
    assert_error(response, 400, "DUPLICATE_FIELD")


async def test_a_key_given_twice_in_a_nested_object_is_refused(api: httpx.AsyncClient) -> None:
    body = (
        b'{"UserId": 1, "CardTypeId": 1, "Phone": "+447911123456",'
        b' "DeliveryAddress": {"City": "A", "City": "B"}}'
    )
    assert_error(
        await api.post("/api/v2/cards", content=body, headers=JSON), 400, "DUPLICATE_FIELD"
    )


async def test_the_same_key_in_two_objects_is_not_a_duplicate(api: httpx.AsyncClient) -> None:
    payload = user_payload()
    response = await api.post("/api/v2/users", json=payload)
    assert response.status_code == 201, response.text


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [("utf-16", b""), ("utf-16-le", b""), ("utf-32", b""), ("utf-8", b"\xef\xbb\xbf")],
)
async def test_a_body_that_is_not_plain_utf8_is_malformed(
    api: httpx.AsyncClient, encoding: str, bom: bytes
) -> None:
    content = bom + b'{"CardId": 1, "Token": "USD", "Value": 10}'.decode().encode(encoding)
    response = await api.post(
        "/api/v2/cards/topup", content=content, headers={**JSON, "Idempotency-Key": "enc-1"}
    )
    assert_error(response, 400, "MALFORMED_JSON")


async def test_invalid_utf8_bytes_are_malformed(api: httpx.AsyncClient) -> None:
    content = '{"FirstName": "José"}'.encode("latin-1")
    assert_error(
        await api.post("/api/v2/users", content=content, headers=JSON), 400, "MALFORMED_JSON"
    )


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
async def test_non_json_number_literals_are_malformed(
    api: httpx.AsyncClient, literal: bytes
) -> None:
    content = b'{"CardId": 1, "Token": "USD", "Value": ' + literal + b"}"
    response = await api.post(
        "/api/v2/cards/topup", content=content, headers={**JSON, "Idempotency-Key": "nan-1"}
    )
    assert_error(response, 400, "MALFORMED_JSON")


async def test_an_integer_of_thousands_of_digits_is_malformed_not_a_crash(
    api: httpx.AsyncClient,
) -> None:
    content = b'{"CardId": ' + b"9" * 5000 + b', "Token": "USD", "Value": 10}'
    response = await api.post(
        "/api/v2/cards/topup", content=content, headers={**JSON, "Idempotency-Key": "long-1"}
    )
    assert_error(response, 400, "MALFORMED_JSON")


async def test_a_deeply_nested_body_is_malformed_not_a_crash(api: httpx.AsyncClient) -> None:
    content = b"[" * 100_000 + b"]" * 100_000
    response = await api.post("/api/v2/users", content=content, headers=JSON)
    assert response.status_code == 400, response.text


@pytest.mark.parametrize("second", ["x-api-key", "X-API-KEY", "X-Api-Key"])
async def test_two_api_key_headers_are_unauthorized(
    anonymous: httpx.AsyncClient, tenant: Tenant, second: str
) -> None:
    response = await anonymous.get(
        "/api/v2/tiers", headers=[("x-api-key", tenant.api_key), (second, tenant.api_key)]
    )
    assert_error(response, 401, "UNAUTHORIZED")


async def test_a_duplicate_key_without_an_api_key_is_unauthorized_first(
    anonymous: httpx.AsyncClient,
) -> None:
    body = b'{"Email": "a@example.com", "Email": "b@example.com"}'
    response = await anonymous.post("/api/v2/users", content=body, headers=JSON)
    assert_error(response, 401, "UNAUTHORIZED")
