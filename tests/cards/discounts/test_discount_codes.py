"""Discount codes on cards: a percentage off the top-up fee (rounded in the platform's
favour), within the code's window; set or cleared per card by the admin route."""

from __future__ import annotations

from decimal import Decimal

import httpx
from fastapi import FastAPI

from tests.cards.discounts.steps import CODES, define, put_code
from tests.cards.funding.outcome_steps import company_of
from tests.cards.funding.steps import active_card, card_balance, set_fees, topup
from tests.conftest import TenantFactory


async def test_a_discounted_card_pays_the_fee_less_the_percentage(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    await define(api, "HALF", PercentOff=50)
    assert (await put_code(api, card, "HALF")).status_code == 200
    response = await topup(api, card, 100)
    assert response.status_code == 200, response.text
    assert Decimal(str(response.json()["Fee"])) == Decimal("0.5")  # 1 % of 100, half off
    assert await card_balance(api, card) == Decimal("99.5")


async def test_the_amount_off_rounds_down_so_the_fee_rounds_up(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    await define(api, "THIRD", PercentOff="33.33")
    await put_code(api, card, "THIRD")
    response = await topup(api, card, "150.5")  # fee 1.51; 33.33 % of it is 0.5033 -> 0.50 off
    assert response.status_code == 200, response.text
    assert Decimal(str(response.json()["Fee"])) == Decimal("1.01")


async def test_clearing_the_code_restores_the_full_fee(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    await define(api)
    await put_code(api, card, "HALF")
    cleared = await put_code(api, card, None)
    assert cleared.status_code == 200
    assert cleared.json()["DiscountCode"] is None
    response = await topup(api, card, 100)
    assert Decimal(str(response.json()["Fee"])) == Decimal("1")


async def test_an_absent_discount_code_clears_it(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    await define(api)
    await put_code(api, card, "HALF")
    response = await api.put(f"{CODES}/cards/{card['Id']}/discount", json={})
    assert response.status_code == 200
    assert Decimal(str((await topup(api, card, 100)).json()["Fee"])) == Decimal("1")


async def test_a_code_outside_its_window_gives_no_discount(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    await define(api, "OLD", ValidFrom="2020-01-01T00:00:00Z", ValidUntil="2020-02-01T00:00:00Z")
    await put_code(api, card, "OLD")
    assert Decimal(str((await topup(api, card, 100)).json()["Fee"])) == Decimal("1")


async def test_a_fixed_fee_is_discounted_too(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    await set_fees(api, card, TopupFeePercentage=0, TopupFixedFee=2)
    await define(api, "QUARTER", PercentOff=25)
    await put_code(api, card, "QUARTER")
    assert Decimal(str((await topup(api, card, 100)).json()["Fee"])) == Decimal("1.5")


async def test_an_unknown_code_is_404_and_changes_nothing(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    await define(api)
    await put_code(api, card, "HALF")
    response = await put_code(api, card, "NOPE")
    assert response.status_code == 404
    assert response.json()["Code"] == "DISCOUNT_CODE_NOT_FOUND"
    assert Decimal(str((await topup(api, card, 100)).json()["Fee"])) == Decimal("0.5")


async def test_a_code_name_is_unique_in_the_company(api: httpx.AsyncClient) -> None:
    await define(api)
    again = await api.post(CODES, json={"Code": "HALF", "PercentOff": 10})
    assert again.status_code == 409
    assert again.json()["Code"] == "DISCOUNT_CODE_EXISTS"


async def test_a_percentage_outside_0_to_100_is_400(api: httpx.AsyncClient) -> None:
    for bad in (0, 100.01, -5, "x"):
        response = await api.post(CODES, json={"Code": "BAD", "PercentOff": bad})
        assert response.status_code == 400, bad


async def test_a_window_ending_before_it_starts_is_taken_and_never_applies(
    api: httpx.AsyncClient,
) -> None:
    response = await api.post(
        CODES,
        json={
            "Code": "W",
            "PercentOff": 5,
            "ValidFrom": "2000-01-02T00:00:00Z",
            "ValidUntil": "2000-01-01T00:00:00Z",
        },
    )
    assert response.status_code == 201, response.text


async def test_the_list_shows_the_companys_codes(api: httpx.AsyncClient) -> None:
    await define(api, "HALF")
    await define(api, "TENTH", PercentOff=10)
    listed = (await api.get(CODES)).json()
    assert [(c["Code"], Decimal(str(c["PercentOff"]))) for c in listed] == [
        ("HALF", Decimal(50)),
        ("TENTH", Decimal(10)),
    ]


async def test_an_operator_sets_a_code_on_any_companys_card(
    api: httpx.AsyncClient, operator: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await active_card(api)
    company_id = await company_of(app, card)
    created = await operator.post(
        f"{CODES}?companyId={company_id}", json={"Code": "OP", "PercentOff": 100}
    )
    assert created.status_code == 201, created.text
    assert (await put_code(operator, card, "OP", company_id)).status_code == 200
    assert Decimal(str((await topup(api, card, 100)).json()["Fee"])) == Decimal("0")


async def test_another_companys_card_is_404_and_keeps_its_code(
    make_tenant: TenantFactory,
) -> None:
    mine, theirs = await make_tenant("Mine"), await make_tenant("Theirs")
    card = await active_card(theirs.client)
    await define(theirs.client)
    await put_code(theirs.client, card, "HALF")
    await define(mine.client)
    response = await put_code(mine.client, card, None)
    assert response.status_code == 404
    assert response.json()["Code"] == "CARD_NOT_FOUND"
    assert (await put_code(mine.client, card, None, theirs.company_id)).status_code == 404
    fee = (await topup(theirs.client, card, 100)).json()["Fee"]
    assert Decimal(str(fee)) == Decimal("0.5")


async def test_a_code_of_another_company_is_unknown(make_tenant: TenantFactory) -> None:
    mine, theirs = await make_tenant("Mine"), await make_tenant("Theirs")
    await define(theirs.client, "THEIRS")
    card = await active_card(mine.client)
    response = await put_code(mine.client, card, "THEIRS")
    assert response.status_code == 404
    assert response.json()["Code"] == "DISCOUNT_CODE_NOT_FOUND"


async def test_setting_a_code_records_an_event(api: httpx.AsyncClient) -> None:
    card = await active_card(api)
    await define(api)
    await put_code(api, card, "HALF")
    events = await api.get("/api/v2/events", params={"type": "card.discount_code.updated"})
    assert [e["Data"] for e in events.json()["Items"]] == [
        {"CardId": card["Id"], "DiscountCode": "HALF"}
    ]
