"""An integer field takes a JSON integer literal only: 1.0 and 1e0 are not 1."""

from __future__ import annotations

import httpx
import pytest

from finplat.kit.fields import INTEGER_ONLY
from tests.cards.funding.steps import active_card, card_balance
from tests.onboarding import create_user


async def top_up(api: httpx.AsyncClient, card_id: str) -> httpx.Response:
    body = '{"CardId": ' + card_id + ', "Token": "USD", "Value": 10}'
    return await api.post(
        "/api/v2/cards/topup", content=body, headers={"content-type": "application/json"}
    )


@pytest.mark.parametrize("spelling", ["{}.0", "{}e0", "{}E+0", "{}0e-1"])
async def test_an_integer_field_given_with_a_fraction_or_exponent_is_refused(
    api: httpx.AsyncClient, spelling: str
) -> None:
    card = await active_card(api)
    response = await top_up(api, spelling.format(card["Id"]))  # names a real card
    assert (response.status_code, response.json()["Code"]) == (400, "VALIDATION_ERROR")
    assert response.json()["ValidationErrors"] == {"CardId": [INTEGER_ONLY]}
    assert await card_balance(api, card) == 0


async def test_a_tier_id_given_as_a_float_literal_is_refused(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await api.post(f"/api/v2/users/{user['Id']}/tier", json={"TierId": 2.0})
    assert response.json()["ValidationErrors"] == {"TierId": [INTEGER_ONLY]}
