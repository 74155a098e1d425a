"""Programmes, merchants and MIDs: the set-up a partner makes before purchases earn points."""

from __future__ import annotations

import httpx

from tests.loyalty.steps import LOYALTY, merchant, new_mid, program


async def test_a_programme_is_created_read_listed_and_updated(api: httpx.AsyncClient) -> None:
    created = await program(api, Name="Rewards", PointsPerUnit=3)
    assert (created["PointsRule"], created["PointsPerUnit"], created["Status"]) == (
        "PER_CURRENCY_UNIT",
        3,
        "ACTIVE",
    )
    read = await api.get(f"{LOYALTY}/programs/{created['Id']}")
    assert read.json() == created
    listed = await api.get(f"{LOYALTY}/programs")
    assert [p["Id"] for p in listed.json()["Items"]] == [created["Id"]]
    updated = await api.patch(
        f"{LOYALTY}/programs/{created['Id']}",
        json={"PointsRule": "PER_TRANSACTION", "PointsPerTransaction": 50, "Status": "INACTIVE"},
    )
    assert updated.status_code == 200, updated.text
    body = updated.json()
    assert (body["PointsRule"], body["PointsPerTransaction"], body["PointsPerUnit"]) == (
        "PER_TRANSACTION",
        50,
        None,
    )
    assert (body["Status"], body["Name"]) == ("INACTIVE", "Rewards")


async def test_a_rule_without_its_rate_takes_one_point(api: httpx.AsyncClient) -> None:
    created = await api.post(
        f"{LOYALTY}/programs", json={"Name": "R", "PointsRule": "PER_TRANSACTION"}
    )
    assert created.status_code == 201, created.text
    assert created.json()["PointsPerTransaction"] == 1


async def test_the_other_rules_rate_is_left_aside(api: httpx.AsyncClient) -> None:
    created = await api.post(
        f"{LOYALTY}/programs",
        json={"Name": "R", "PointsPerUnit": 3, "PointsPerTransaction": 5},
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert (body["PointsRule"], body["PointsPerUnit"], body["PointsPerTransaction"]) == (
        "PER_CURRENCY_UNIT",
        3,
        None,
    )


async def test_patching_only_the_rate_the_stored_rule_does_not_use_is_409(
    api: httpx.AsyncClient,
) -> None:
    created = (await api.post(f"{LOYALTY}/programs", json={"Name": "R"})).json()
    changed = await api.patch(
        f"{LOYALTY}/programs/{created['Id']}", json={"PointsPerTransaction": 5}
    )
    assert (changed.status_code, changed.json()["Code"]) == (409, "POINTS_RULE_CONFLICT")


async def test_a_merchant_is_created_with_its_mids_and_takes_more(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    first, second = new_mid(), new_mid()
    created = await merchant(api, owner["Id"], first, City="London", Country="GB")
    assert [m["Mid"] for m in created["Mids"]] == [first]
    added = await api.post(f"{LOYALTY}/merchants/{created['Id']}/ids", json={"Mid": second})
    assert added.status_code == 201, added.text
    listed = await api.get(f"{LOYALTY}/merchants/{created['Id']}/ids")
    assert [m["Mid"] for m in listed.json()["Items"]] == [first, second]
    merchants = (await api.get(f"{LOYALTY}/merchants")).json()["Items"]
    assert [(m["Id"], m["City"], len(m["Mids"])) for m in merchants] == [
        (created["Id"], "London", 2)
    ]


async def test_a_mid_belongs_to_one_merchant_of_the_company(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    other = await merchant(api, owner["Id"])
    again = await api.post(f"{LOYALTY}/merchants/{other['Id']}/ids", json={"Mid": mid})
    assert (again.status_code, again.json()["Code"]) == (409, "LOYALTY_MID_IN_USE")


async def test_deleting_a_mid_answers_204_then_404(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    shop = await merchant(api, owner["Id"], new_mid())
    path = f"{LOYALTY}/merchants/{shop['Id']}/ids/{shop['Mids'][0]['MidId']}"
    first = await api.delete(path)
    assert (first.status_code, first.content) == (204, b"")
    second = await api.delete(path)
    assert (second.status_code, second.json()["Code"]) == (404, "LOYALTY_MID_NOT_FOUND")
    assert (await api.get(f"{LOYALTY}/merchants/{shop['Id']}/ids")).json()["Items"] == []


async def test_a_mid_of_another_merchant_is_404_on_delete(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    shop = await merchant(api, owner["Id"], new_mid())
    other = await merchant(api, owner["Id"])
    response = await api.delete(f"{LOYALTY}/merchants/{other['Id']}/ids/{shop['Mids'][0]['MidId']}")
    assert response.status_code == 404
    assert len((await api.get(f"{LOYALTY}/merchants/{shop['Id']}/ids")).json()["Items"]) == 1


async def test_a_merchant_of_an_unknown_programme_is_404(api: httpx.AsyncClient) -> None:
    response = await api.post(f"{LOYALTY}/merchants", json={"Name": "Shop", "ProgramId": 987654321})
    assert (response.status_code, response.json()["Code"]) == (404, "LOYALTY_PROGRAM_NOT_FOUND")
