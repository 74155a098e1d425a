"""Authorization rules over HTTP: CRUD, scope checks, and their effect on the real-time
decision (`RulesFired`, `RULE_DECLINED`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx

from tests.authorization.steps import bin_range_id, create_rule, max_amount_rule
from tests.cards.transactions.steps import authorize, funded_card

RULES = "/api/v2/authorization/rules"


async def test_bin_ranges_list_the_card_programmes_of_the_companys_products(
    api: httpx.AsyncClient,
) -> None:
    await funded_card(api)
    response = await api.get("/api/v2/authorization/bin-ranges")
    assert response.status_code == 200, response.text
    cardprov = next(r for r in response.json()["BinRanges"] if r["Bin"] == "424242")
    assert cardprov["CardTypeIds"]
    again = await api.get("/api/v2/authorization/bin-ranges")
    assert again.json() == response.json()


async def test_a_company_rule_without_a_bin_range_is_400(api: httpx.AsyncClient) -> None:
    response = await api.post(
        RULES,
        json={"ScopeType": "COMPANY", "RuleType": "MCC_BLOCK", "Configuration": {"Mccs": ["5812"]}},
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "BIN_RANGE_REQUIRED"


async def test_a_card_rule_with_another_bin_range_is_409(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    other = await bin_range_id(api, "535353")
    response = await api.post(
        RULES,
        json={
            "ScopeType": "CARD",
            "CardId": card["Id"],
            "BinRangeId": other,
            "RuleType": "MAX_AMOUNT",
            "Configuration": {"MaxAmount": 10, "Currency": "USD"},
        },
    )
    assert response.status_code == 409
    assert response.json()["Code"] == "BIN_RANGE_CONFLICT"


async def test_a_card_rule_takes_the_bin_range_of_its_card_product(
    api: httpx.AsyncClient,
) -> None:
    card = await funded_card(api)
    rule = await create_rule(
        api,
        ScopeType="CARD",
        CardId=card["Id"],
        RuleType="MAX_AMOUNT",
        Configuration={"maxamount": "10.50", "Currency": "USD"},
    )
    assert rule["BinRangeId"] == await bin_range_id(api)
    assert rule["Configuration"] == {"MaxAmount": 10.5, "Currency": "USD"}


async def test_an_invalid_configuration_is_400_naming_the_field(api: httpx.AsyncClient) -> None:
    await funded_card(api)
    response = await api.post(
        RULES,
        json={
            "BinRangeId": await bin_range_id(api),
            "RuleType": "MCC_BLOCK",
            "Configuration": {"Mccs": ["58x2"]},
        },
    )
    assert response.status_code == 400, response.text
    assert "Configuration.Mccs.0" in response.json()["ValidationErrors"]


async def test_an_mcc_block_declines_purchases_in_the_category(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    rule = await create_rule(
        api,
        Name="No restaurants",
        BinRangeId=await bin_range_id(api),
        RuleType="MCC_BLOCK",
        Configuration={"Mccs": ["5812"]},
    )
    declined = await authorize(api, card, 5, Mcc="5812")
    assert (declined["Approved"], declined["DeclineReason"], declined["ResponseCode"]) == (
        False,
        "RULE_DECLINED",
        "57",
    )
    assert [(f["RuleId"], f["Shadow"]) for f in declined["RulesFired"]] == [(rule["RuleId"], False)]
    approved = await authorize(api, card, 5, Mcc="5411")
    assert (approved["Approved"], approved["RulesFired"]) == (True, [])


async def test_a_shadow_rule_is_reported_and_never_declines(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    await create_rule(
        api,
        BinRangeId=await bin_range_id(api),
        RuleType="COUNTRY_BLOCK",
        Configuration={"Countries": ["FR"]},
        Shadow=True,
    )
    answer = await authorize(api, card, 5, Country="FR")
    assert answer["Approved"] is True
    assert [f["Shadow"] for f in answer["RulesFired"]] == [True]
    txn = await api.get(f"/api/v2/card-transactions/{answer['CardTransactionId']}")
    assert txn.json()["RulesFired"] == answer["RulesFired"]


async def test_a_country_allow_list_declines_other_countries(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    await create_rule(
        api,
        ScopeType="USER",
        UserId=card["UserId"],
        BinRangeId=await bin_range_id(api),
        RuleType="COUNTRY_ALLOW",
        Configuration={"Countries": ["GB", "IE"]},
        ResponseCode="62",
    )
    assert (await authorize(api, card, 5, Country="IE"))["Approved"] is True
    declined = await authorize(api, card, 5, Country="US")
    assert (declined["DeclineReason"], declined["ResponseCode"]) == ("RULE_DECLINED", "62")


async def test_a_maximum_amount_declines_a_larger_purchase(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    await max_amount_rule(api, card, 20)
    assert (await authorize(api, card, 20))["Approved"] is True
    assert (await authorize(api, card, 20.01))["DeclineReason"] == "RULE_DECLINED"


async def test_a_daily_velocity_count_approves_that_many(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    await create_rule(
        api,
        ScopeType="CARD",
        CardId=card["Id"],
        RuleType="VELOCITY",
        Configuration={"Window": "DAY", "MaxCount": 2},
    )
    answers = [await authorize(api, card, 1) for _ in range(3)]
    assert [a["Approved"] for a in answers] == [True, True, False]


async def test_a_weekly_velocity_amount_declines_beyond_it(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    await create_rule(
        api,
        ScopeType="CARD",
        CardId=card["Id"],
        RuleType="VELOCITY",
        Configuration={"Window": "WEEK", "MaxAmount": 25, "Currency": "USD"},
    )
    assert (await authorize(api, card, 20))["Approved"] is True
    assert (await authorize(api, card, 6))["Approved"] is False
    assert (await authorize(api, card, 5))["Approved"] is True


async def test_a_rule_not_yet_in_effect_is_not_evaluated(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    later = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    await max_amount_rule(api, card, 1, EffectiveFrom=later)
    assert (await authorize(api, card, 5))["Approved"] is True


async def test_an_inactive_rule_is_not_evaluated(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    rule = await max_amount_rule(api, card, 1)
    patched = await api.patch(f"{RULES}/{rule['RuleId']}", json={"Active": False})
    assert patched.status_code == 200, patched.text
    assert patched.json()["Active"] is False
    assert (await authorize(api, card, 5))["Approved"] is True


async def test_rules_are_listed_in_priority_order(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    common = {"ScopeType": "CARD", "CardId": card["Id"], "RuleType": "MCC_BLOCK"}
    low = await create_rule(api, **common, Priority=50, Configuration={"Mccs": ["1111"]})
    high = await create_rule(api, **common, Priority=10, Configuration={"Mccs": ["2222"]})
    listed = await api.get(RULES)
    assert [r["RuleId"] for r in listed.json()["Rules"]] == [high["RuleId"], low["RuleId"]]


async def test_a_deleted_rule_is_gone(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    rule = await max_amount_rule(api, card, 1)
    assert (await api.delete(f"{RULES}/{rule['RuleId']}")).status_code == 204
    read = await api.get(f"{RULES}/{rule['RuleId']}")
    assert (read.status_code, read.json()["Code"]) == (404, "AUTHORIZATION_RULE_NOT_FOUND")
    assert (await authorize(api, card, 5))["Approved"] is True


async def test_a_new_configuration_needs_its_rule_type(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    rule = await create_rule(
        api,
        ScopeType="CARD",
        CardId=card["Id"],
        RuleType="MCC_BLOCK",
        Configuration={"Mccs": ["5812"]},
    )
    alone = await api.patch(f"{RULES}/{rule['RuleId']}", json={"Configuration": {"Mccs": ["1"]}})
    assert alone.status_code == 400
    changed = await api.patch(
        f"{RULES}/{rule['RuleId']}",
        json={"RuleType": "COUNTRY_BLOCK", "Configuration": {"Countries": ["FR"]}, "Name": None},
    )
    assert changed.status_code == 200, changed.text
    assert (changed.json()["RuleType"], changed.json()["Configuration"]) == (
        "COUNTRY_BLOCK",
        {"Countries": ["FR"]},
    )


async def test_a_velocity_amount_in_cents_is_accepted(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    rule = await create_rule(
        api,
        ScopeType="CARD",
        CardId=card["Id"],
        RuleType="VELOCITY",
        Configuration={"Currency": "USD", "MaxAmount": 0.01, "Window": "DAY"},
    )
    assert rule["Configuration"] == {"Currency": "USD", "MaxAmount": 0.01, "Window": "DAY"}


async def test_an_effective_time_must_be_a_date_time(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    rule = await create_rule(
        api,
        ScopeType="CARD",
        CardId=card["Id"],
        RuleType="MCC_BLOCK",
        Configuration={"Mccs": ["5812"]},
    )
    response = await api.patch(f"{RULES}/{rule['RuleId']}", json={"EffectiveTo": 0})
    assert response.status_code == 400


async def test_a_limit_below_a_cent_is_400(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    rule = await create_rule(
        api,
        ScopeType="CARD",
        CardId=card["Id"],
        RuleType="MCC_BLOCK",
        Configuration={"Mccs": ["5812"]},
    )
    response = await api.patch(
        f"{RULES}/{rule['RuleId']}",
        json={
            "RuleType": "VELOCITY",
            "Configuration": {"Currency": "USD", "MaxAmount": 5e-324, "Window": "DAY"},
        },
    )
    assert response.status_code == 400, response.text


async def test_a_company_rule_of_another_bin_range_is_not_evaluated(
    api: httpx.AsyncClient,
) -> None:
    card = await funded_card(api)
    ranges = (await api.get("/api/v2/authorization/bin-ranges")).json()["BinRanges"]
    other = next(r["BinRangeId"] for r in ranges if r["Bin"] != "424242")
    await create_rule(
        api,
        Name="Elsewhere",
        BinRangeId=other,
        RuleType="MCC_BLOCK",
        Configuration={"Mccs": ["5812"]},
    )
    approved = await authorize(api, card, 5, Mcc="5812")
    assert (approved["Approved"], approved["RulesFired"]) == (True, [])


async def test_a_rule_past_its_effective_end_is_not_evaluated(api: httpx.AsyncClient) -> None:
    card = await funded_card(api)
    now = datetime.now(UTC)
    await max_amount_rule(
        api,
        card,
        1,
        EffectiveFrom=(now - timedelta(days=2)).isoformat(),
        EffectiveTo=(now - timedelta(days=1)).isoformat(),
    )
    assert (await authorize(api, card, 5))["Approved"] is True


async def test_a_user_rule_is_evaluated_for_its_users_cards_only(api: httpx.AsyncClient) -> None:
    card, other = await funded_card(api), await funded_card(api)
    assert card["UserId"] != other["UserId"]
    await create_rule(
        api,
        ScopeType="USER",
        UserId=card["UserId"],
        BinRangeId=await bin_range_id(api),
        RuleType="MAX_AMOUNT",
        Configuration={"MaxAmount": 1, "Currency": "USD"},
    )
    assert (await authorize(api, card, 5))["DeclineReason"] == "RULE_DECLINED"
    assert (await authorize(api, other, 5))["Approved"] is True
