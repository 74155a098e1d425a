"""No card response carries a full card number (a Luhn-valid run of 13-19 digits) or a CVV:
every card endpoint, every provider, every status."""

from __future__ import annotations

import httpx

from tests.cards.steps import approved_card_user, card_type_id, control, order, order_body
from tests.sensitive_data import find


async def test_card_responses_hold_no_card_number_or_cvv(api: httpx.AsyncClient) -> None:
    texts: list[tuple[str, str]] = []

    def keep(response: httpx.Response) -> httpx.Response:
        texts.append((f"{response.request.method} {response.request.url.path}", response.text))
        return response

    user = await approved_card_user(api, bankprov=True)
    for provider in ("cardprov", "switchprov", "bankprov"):
        for card_type in ("VIRTUAL", "PHYSICAL"):
            await card_type_id(api, user, provider, card_type)
            ordered = keep(await order(api, await order_body(api, user, provider, card_type)))
            assert ordered.status_code == 201, ordered.text
            card = ordered.json()
            keep(
                await api.post(
                    f"/api/v2/sandbox/cards/{card['Id']}/callbacks", params={"userId": user["Id"]}
                )
            )
            params = {"userId": user["Id"]}
            keep(await api.get(f"/api/v2/cards/{card['Id']}", params=params))
            keep(await control(api, card, "activate"))
            keep(await control(api, card, "freeze"))
            keep(await control(api, card, "enable"))
            keep(await control(api, card, "pin", Pin="480273"))
            keep(await api.get(f"/api/v2/cards/{card['Id']}/transactions", params=params))
            keep(await api.get(f"/api/v2/cards/{card['Id']}/widget", params=params))
            if provider == "cardprov":
                keep(await api.delete(f"/api/v2/cards/{card['Id']}", params=params))
    keep(await api.get("/api/v2/cards", params={"userId": user["Id"]}))
    assert len(texts) > 40
    findings = [f for source, text in texts for f in find(text, source)]
    assert findings == []
    assert all('"cvv":"***"' in t for s, t in texts if s.endswith("/cards") and "GET" in s)
