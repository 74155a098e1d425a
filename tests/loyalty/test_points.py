"""Card purchases at a merchant's MID earn points under its programme, once per purchase,
following what the purchase paid."""

from __future__ import annotations

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from finplat.loyalty.models import PointsRule
from finplat.loyalty.points import earned
from tests.cards.transactions.steps import authorize, read, settle
from tests.loyalty.steps import (
    LOYALTY,
    cleared_purchase,
    member_card,
    merchant,
    new_mid,
    points,
    program,
)


async def test_a_cleared_purchase_at_a_merchants_mid_earns_points(
    api: httpx.AsyncClient,
) -> None:
    owner = await program(api, PointsPerUnit=2)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    held = await cleared_purchase(api, card, 12.99, mid)
    assert (await read(api, held["CardTransactionId"]))["Mid"] == mid
    assert await points(api, card["UserId"]) == 25
    balance = (await api.get(f"{LOYALTY}/users/{card['UserId']}/points")).json()
    assert balance["Programs"] == [{"ProgramId": owner["Id"], "Points": 25}]


async def test_an_authorized_purchase_earns_nothing_until_cleared(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    held = await authorize(api, card, 10, Mid=mid)
    assert await points(api, card["UserId"]) == 0
    await settle(api, card, held["AuthorizationId"], "clear")
    assert await points(api, card["UserId"]) == 20


async def test_a_reversed_purchase_earns_nothing(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    held = await authorize(api, card, 10, Mid=mid)
    assert (await settle(api, card, held["AuthorizationId"], "reverse")).status_code == 200
    assert await points(api, card["UserId"]) == 0


async def test_a_refund_takes_back_the_points_it_refunds(api: httpx.AsyncClient) -> None:
    owner = await program(api, PointsPerUnit=1)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    held = await cleared_purchase(api, card, 40, mid)
    assert await points(api, card["UserId"]) == 40
    await settle(api, card, held["AuthorizationId"], "refund", 15)
    assert await points(api, card["UserId"]) == 25
    await settle(api, card, held["AuthorizationId"], "refund", 25)
    assert await points(api, card["UserId"]) == 0


async def test_a_fixed_award_is_given_once_per_purchase_whatever_its_events(
    api: httpx.AsyncClient,
) -> None:
    owner = await program(api, PointsPerTransaction=100)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    held = await authorize(api, card, 10, Mid=mid)
    await settle(api, card, held["AuthorizationId"], "clear", 4)
    await settle(api, card, held["AuthorizationId"], "clear", 6)
    assert await points(api, card["UserId"]) == 100
    await cleared_purchase(api, card, 3, mid)
    assert await points(api, card["UserId"]) == 200


async def test_a_purchase_without_a_known_mid_earns_nothing(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    await merchant(api, owner["Id"], new_mid())
    card = await member_card(api)
    await cleared_purchase(api, card, 10, None)
    await cleared_purchase(api, card, 10, new_mid())
    assert await points(api, card["UserId"]) == 0


async def test_a_deleted_mid_matches_no_later_purchase_and_keeps_earlier_points(
    api: httpx.AsyncClient,
) -> None:
    owner = await program(api)
    mid = new_mid()
    shop = await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    await cleared_purchase(api, card, 5, mid)
    await api.delete(f"{LOYALTY}/merchants/{shop['Id']}/ids/{shop['Mids'][0]['MidId']}")
    await cleared_purchase(api, card, 5, mid)
    assert await points(api, card["UserId"]) == 10


async def test_an_inactive_programme_awards_no_new_purchase(api: httpx.AsyncClient) -> None:
    owner = await program(api)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    await api.patch(f"{LOYALTY}/programs/{owner['Id']}", json={"Status": "INACTIVE"})
    card = await member_card(api)
    await cleared_purchase(api, card, 10, mid)
    assert await points(api, card["UserId"]) == 0


async def test_a_new_rate_leaves_awards_already_made_under_their_rule(
    api: httpx.AsyncClient,
) -> None:
    owner = await program(api, PointsPerUnit=1)
    mid = new_mid()
    await merchant(api, owner["Id"], mid)
    card = await member_card(api)
    held = await cleared_purchase(api, card, 20, mid)
    await api.patch(f"{LOYALTY}/programs/{owner['Id']}", json={"PointsPerUnit": 10})
    await settle(api, card, held["AuthorizationId"], "refund", 20)
    assert await points(api, card["UserId"]) == 0


async def test_points_of_an_unknown_user_are_404(api: httpx.AsyncClient) -> None:
    response = await api.get(f"{LOYALTY}/users/987654321/points")
    assert (response.status_code, response.json()["Code"]) == (404, "USER_NOT_FOUND")


@settings(max_examples=200, deadline=None)
@given(
    paid=st.integers(min_value=0, max_value=10**12),
    rate=st.integers(min_value=1, max_value=1_000_000),
    refund=st.integers(min_value=0, max_value=10**12),
)
def test_points_never_exceed_the_whole_units_paid_and_a_refund_never_adds(
    paid: int, rate: int, refund: int
) -> None:
    full = earned(PointsRule.PER_CURRENCY_UNIT, rate, paid_minor=paid, currency="USD")
    assert full == (paid // 100) * rate + (paid % 100) * rate // 100
    assert full * 100 <= paid * rate
    after = earned(
        PointsRule.PER_CURRENCY_UNIT, rate, paid_minor=max(0, paid - refund), currency="USD"
    )
    assert 0 <= after <= full
