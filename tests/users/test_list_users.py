"""GET /api/v2/users: paginated with `page` and `pageSize`, filterable by externalUserId."""

from __future__ import annotations

import httpx

from tests.factories import user_payload


async def seed(api: httpx.AsyncClient, count: int) -> list[int]:
    ids = []
    for i in range(count):
        response = await api.post("/api/v2/users", json=user_payload(ExternalUserId=f"list_{i}"))
        ids.append(response.json()["Id"])
    return ids


async def test_pages_partition_the_users_in_creation_order(api: httpx.AsyncClient) -> None:
    ids = await seed(api, 5)
    first = (await api.get("/api/v2/users", params={"page": 1, "pageSize": 2})).json()
    second = (await api.get("/api/v2/users", params={"page": 2, "pageSize": 2})).json()
    third = (await api.get("/api/v2/users", params={"page": 3, "pageSize": 2})).json()
    assert [u["Id"] for u in first["Items"] + second["Items"] + third["Items"]] == ids
    assert (first["HasMore"], second["HasMore"], third["HasMore"]) == (True, True, False)
    assert (first["Page"], first["PageSize"]) == (1, 2)


async def test_page_past_the_end_is_empty(api: httpx.AsyncClient) -> None:
    await seed(api, 2)
    body = (await api.get("/api/v2/users", params={"page": 9})).json()
    assert body["Items"] == []
    assert body["HasMore"] is False


async def test_defaults_are_page_1_and_20_items(api: httpx.AsyncClient) -> None:
    body = (await api.get("/api/v2/users")).json()
    assert (body["Page"], body["PageSize"]) == (1, 20)


async def test_page_size_above_maximum_is_400(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/users", params={"pageSize": 101})
    assert response.status_code == 400
    assert "PageSize" in response.json()["ValidationErrors"]


async def test_page_below_one_is_400(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/users", params={"page": 0})
    assert response.status_code == 400
    assert "Page" in response.json()["ValidationErrors"]


async def test_filter_by_external_user_id(api: httpx.AsyncClient) -> None:
    await seed(api, 3)
    body = (await api.get("/api/v2/users", params={"externalUserId": "list_1"})).json()
    assert [u["ExternalUserId"] for u in body["Items"]] == ["list_1"]


async def test_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/users/123456789")
    assert response.status_code == 404
    assert response.json()["Code"] == "USER_NOT_FOUND"
