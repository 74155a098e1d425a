"""An id is from 1 to 2^53 - 1 wherever it appears, with the same error in a path, a query
and a body."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx
import pytest

from finplat.kit.schemas import ID_RANGE, MAX_ID

ABOVE = str(MAX_ID + 1)
THIRTY_DIGITS = "9" * 30
THOUSANDS_OF_DIGITS = "1" * 5000

Send = Callable[[httpx.AsyncClient, str], Awaitable[httpx.Response]]


async def in_a_path(api: httpx.AsyncClient, id_: str) -> httpx.Response:
    return await api.get(f"/api/v2/users/{id_}")


async def in_an_id_path(api: httpx.AsyncClient, id_: str) -> httpx.Response:
    return await api.get(f"/api/v2/cards/{id_}", params={"userId": 1})


async def in_a_query(api: httpx.AsyncClient, id_: str) -> httpx.Response:
    return await api.get("/api/v2/cards", params={"userId": id_})


async def in_a_body(api: httpx.AsyncClient, id_: str) -> httpx.Response:
    body = '{"CardId": ' + id_ + ', "Token": "USD", "Value": 10}'
    return await api.post(
        "/api/v2/cards/topup", content=body, headers={"content-type": "application/json"}
    )


PLACES: list[tuple[str, Send, str]] = [
    ("path", in_a_path, "UserId"),
    ("convertor path", in_an_id_path, "CardId"),
    ("query", in_a_query, "UserId"),
    ("body", in_a_body, "CardId"),
]


@pytest.mark.parametrize(("place", "send", "field"), PLACES, ids=[p[0] for p in PLACES])
@pytest.mark.parametrize("id_", [ABOVE, THIRTY_DIGITS, "0"], ids=["2^53", "30 digits", "zero"])
async def test_an_id_out_of_range_is_the_same_400_in_a_path_a_query_and_a_body(
    api: httpx.AsyncClient, place: str, send: Send, field: str, id_: str
) -> None:
    response = await send(api, id_)
    assert (response.status_code, response.json()["Code"]) == (400, "VALIDATION_ERROR")
    assert response.json()["ValidationErrors"] == {field: [ID_RANGE]}


@pytest.mark.parametrize(("place", "send", "field"), PLACES[:3], ids=[p[0] for p in PLACES[:3]])
async def test_an_id_of_thousands_of_digits_in_a_path_or_query_is_the_same_400(
    api: httpx.AsyncClient, place: str, send: Send, field: str
) -> None:
    response = await send(api, THOUSANDS_OF_DIGITS)
    assert response.json()["ValidationErrors"] == {field: [ID_RANGE]}


@pytest.mark.parametrize(("place", "send", "field"), PLACES, ids=[p[0] for p in PLACES])
async def test_the_largest_id_is_well_formed(
    api: httpx.AsyncClient, place: str, send: Send, field: str
) -> None:
    response = await send(api, str(MAX_ID))
    assert response.status_code == 404, response.text
