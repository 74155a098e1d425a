"""Every error leaves in the spec's standard body; never FastAPI's {"detail": ...}."""

from __future__ import annotations

import time

import httpx
import pytest
from fastapi import FastAPI

from finplat.http.routing import api_router

STANDARD_FIELDS = {"Message", "Code", "Status", "ValidationErrors", "Details"}


def assert_standard(response: httpx.Response, status: int, code: str) -> dict:  # type: ignore[type-arg]
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == STANDARD_FIELDS
    assert body["Status"] == status
    assert body["Code"] == code
    assert "detail" not in body
    return body  # type: ignore[no-any-return]


async def test_validation_error_is_400_with_pascal_case_field_keys(api: httpx.AsyncClient) -> None:
    body = assert_standard(
        await api.post("/api/v2/users", json={"Email": "nope"}), 400, "VALIDATION_ERROR"
    )
    assert "Email" in body["ValidationErrors"]
    assert "FirstName" in body["ValidationErrors"]


async def test_query_validation_error_is_keyed_by_pascal_case_name(api: httpx.AsyncClient) -> None:
    body = assert_standard(
        await api.get("/api/v2/users", params={"pageSize": "0"}), 400, "VALIDATION_ERROR"
    )
    assert set(body["ValidationErrors"]) == {"PageSize"}


async def test_path_validation_error_is_400(api: httpx.AsyncClient) -> None:
    body = assert_standard(await api.get("/api/v2/users/abc"), 400, "VALIDATION_ERROR")
    assert set(body["ValidationErrors"]) == {"UserId"}


async def test_out_of_range_id_is_400_not_a_database_error(api: httpx.AsyncClient) -> None:
    assert_standard(await api.get("/api/v2/users/9223372036854775808"), 400, "VALIDATION_ERROR")


# Past Python's 4300-digit limit on `int()` from text: routing used to end such a path in a 500.
THOUSANDS_OF_DIGITS = "1" * 5000


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", f"/api/v2/cards/{THOUSANDS_OF_DIGITS}?userId=1"),
        ("POST", f"/api/v2/cards/{THOUSANDS_OF_DIGITS}/freeze?userId=1"),
        ("GET", f"/api/v2/banking/payouts/{THOUSANDS_OF_DIGITS}"),
        ("GET", f"/api/v2/users/{THOUSANDS_OF_DIGITS}"),
    ],
)
async def test_an_id_of_thousands_of_digits_in_a_path_is_400(
    api: httpx.AsyncClient, method: str, path: str
) -> None:
    assert_standard(await api.request(method, path), 400, "VALIDATION_ERROR")


async def test_an_id_path_reads_leading_zeros_as_the_number(api: httpx.AsyncClient) -> None:
    # The same card as /api/v2/cards/7: not found, rather than refused as out of range.
    response = await api.get(f"/api/v2/cards/{'0' * 5000}7", params={"userId": 1})
    assert response.status_code == 404, response.text


async def test_an_id_in_a_body_with_a_huge_exponent_is_refused_at_once(
    api: httpx.AsyncClient,
) -> None:
    # 1E+1000000 is eleven bytes; turning it into an int costs tens of seconds of CPU.
    started = time.monotonic()
    response = await api.post(
        "/api/v2/cards/topup",
        content=b'{"CardId": 1E+1000000, "Token": "USD", "Value": 10}',
        headers={"content-type": "application/json"},
    )
    body = assert_standard(response, 400, "VALIDATION_ERROR")
    assert set(body["ValidationErrors"]) == {"CardId"}
    assert time.monotonic() - started < 2


async def test_malformed_json_is_400_malformed_json(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/api/v2/users", content=b'{"Email": ', headers={"content-type": "application/json"}
    )
    assert_standard(response, 400, "MALFORMED_JSON")


async def test_json_that_is_not_an_object_is_400(api: httpx.AsyncClient) -> None:
    body = assert_standard(await api.post("/api/v2/users", json=[1, 2]), 400, "VALIDATION_ERROR")
    assert "Body" in body["ValidationErrors"]


async def test_missing_body_is_400(api: httpx.AsyncClient) -> None:
    response = await api.post("/api/v2/users", headers={"content-type": "application/json"})
    assert_standard(response, 400, "VALIDATION_ERROR")


async def test_non_json_content_type_is_415(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/api/v2/users", content=b"Email=a", headers={"content-type": "text/plain"}
    )
    assert_standard(response, 415, "UNSUPPORTED_MEDIA_TYPE")


async def test_unknown_route_is_404_route_not_found(api: httpx.AsyncClient) -> None:
    assert_standard(await api.get("/api/v2/no-such-thing"), 404, "ROUTE_NOT_FOUND")
    assert_standard(await api.get("/nowhere"), 404, "ROUTE_NOT_FOUND")


async def test_wrong_method_is_405_with_allow_header(api: httpx.AsyncClient) -> None:
    response = await api.delete("/api/v2/tiers")
    assert_standard(response, 405, "METHOD_NOT_ALLOWED")
    assert "GET" in response.headers["allow"]


async def test_unhandled_error_is_500_with_request_id_and_no_internals(
    app: FastAPI, api: httpx.AsyncClient
) -> None:
    router = api_router()

    @router.get("/test/explode")
    async def explode() -> None:
        raise ValueError("secret internal detail: postgres password hunter2")

    app.include_router(router)
    response = await api.get("/test/explode", headers={"x-request-id": "req-explode-1"})
    body = assert_standard(response, 500, "INTERNAL_ERROR")
    assert "req-explode-1" in body["Details"]
    assert response.headers["x-request-id"] == "req-explode-1"
    assert "hunter2" not in response.text
    assert "ValueError" not in response.text
    assert "Traceback" not in response.text


async def test_unhandled_error_in_unauthenticated_route_is_standard_500(
    app: FastAPI, anonymous: httpx.AsyncClient
) -> None:
    @app.get("/test/explode-open")
    async def explode_open() -> None:
        raise KeyError("internal")

    assert_standard(await anonymous.get("/test/explode-open"), 500, "INTERNAL_ERROR")


async def test_unauthorized_uses_standard_body(anonymous: httpx.AsyncClient) -> None:
    assert_standard(await anonymous.get("/api/v2/users"), 401, "UNAUTHORIZED")


async def test_business_rule_error_uses_standard_body(api: httpx.AsyncClient) -> None:
    assert_standard(await api.get("/api/v2/users/424242"), 404, "USER_NOT_FOUND")


async def test_body_that_is_not_an_object_is_400_even_when_every_field_is_optional(
    api: httpx.AsyncClient,
) -> None:
    # Found by fuzzing: FastAPI validates bodies with from_attributes, which took a bare
    # number for an update with every field left out.
    for raw in (b"2.5", b"0", b'"text"', b"[]", b"true"):
        response = await api.put(
            "/api/v2/company/configuration",
            content=raw,
            headers={"content-type": "application/json"},
        )
        body = assert_standard(response, 400, "VALIDATION_ERROR")
        assert "Body" in body["ValidationErrors"]
