"""A batched top-up of a discounted card charges the fee the route charges (PostgreSQL)."""

from __future__ import annotations

from decimal import Decimal

import httpx
from fastapi import FastAPI

from tests.cards.discounts.steps import define, put_code
from tests.cards.funding.batches.test_batches import (
    batchable_card,
    postgresql,
    since,
    snapshot,
)
from tests.cards.funding.steps import route_only, topup


@postgresql
async def test_a_batched_top_up_of_a_discounted_card_charges_the_routes_fee(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await batchable_card(api)
    await define(api, "THIRD", PercentOff="33.33")
    assert (await put_code(api, card, "THIRD")).status_code == 200
    before = snapshot(app)
    batched = await topup(api, card, 100.5, key="batched-discount")
    assert since(app, before) == (1, 0)  # served by a batch
    with route_only(app):
        routed = await topup(api, card, 100.5, key="routed-discount")
    assert since(app, before) == (1, 0)
    assert batched.status_code == routed.status_code == 200, batched.text
    # 1 % of 100.50 rounded up is 1.01; 33.33 % of 101 minor is 33.66 -> 33 off: 0.68.
    assert Decimal(str(batched.json()["Fee"])) == Decimal("0.68")
    assert batched.json()["Fee"] == routed.json()["Fee"]
