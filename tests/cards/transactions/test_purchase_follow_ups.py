"""What follows a purchase decided on the card provider's real-time request: its decline fee and
its auto top-ups run in the background (`follow_up.run_due`), once, after the answer."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from finplat.cards.funding import decline_fees
from finplat.cards.transactions import follow_up
from finplat.cards.transactions.repository import follow_ups_due
from finplat.config import Settings
from finplat.kit.clock import utcnow
from tests.cards.funding.steps import card_balance, set_auto_topup, set_fees
from tests.cards.steps import card_detail
from tests.cards.transactions.steps import (
    ask_in_real_time,
    authorize,
    funded_card,
    provider_card_ref,
)
from tests.conftest import Tenant
from tests.partner_hosted.steps import partner_hosted

Ask = Callable[[dict[str, Any], int, str], Awaitable[dict[str, Any]]]


@pytest.fixture
def ask(anonymous: httpx.AsyncClient, app: FastAPI, settings: Settings, tenant: Tenant) -> Ask:
    """The card provider asks in real time about a purchase of `amount_minor` on `card`."""

    async def asked(
        card: dict[str, Any], amount_minor: int, authorization_id: str
    ) -> dict[str, Any]:
        answer = await ask_in_real_time(
            anonymous,
            settings.provider_callback_secret,
            {
                "companyId": tenant.company_id,
                "authorizationId": authorization_id,
                "cardId": await provider_card_ref(app, card),
                "amountMinor": amount_minor,
                "currency": "USD",
                "merchant": "Network Store",
            },
        )
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    return asked


async def _run(app: FastAPI) -> int:
    return await follow_up.run_due(app.state.session_factory, app.state.providers)


async def _due(app: FastAPI) -> list[tuple[int, int]]:
    async with app.state.session_factory() as session:
        return await follow_ups_due(session, now=utcnow(), limit=100)


async def test_a_real_time_decline_pays_its_decline_fee_after_the_answer_and_once(
    api: httpx.AsyncClient, app: FastAPI, ask: Ask
) -> None:
    card = await funded_card(api, 10)
    await set_fees(api, card, DeclineFee=2.5)
    answer = await ask(card, 5000, "net-fu-1")
    assert (answer["Approved"], answer["DeclineReason"]) == (False, "INSUFFICIENT_FUNDS")
    assert await card_balance(api, card) == Decimal(10)
    assert await _run(app) == 1
    assert await card_balance(api, card) == Decimal("7.5")
    assert await _run(app) == 0
    assert await card_balance(api, card) == Decimal("7.5")


async def test_a_real_time_decline_fee_the_card_cannot_pay_blocks_it(
    api: httpx.AsyncClient, app: FastAPI, ask: Ask
) -> None:
    card = await funded_card(api, 5)
    await set_fees(api, card, DeclineFee=6)
    await ask(card, 5000, "net-fu-2")
    assert await _run(app) == 1
    assert (await card_detail(api, card))["Status"] == "SYSTEM_BLOCKED"


async def test_a_real_time_insufficient_funds_decline_runs_the_failed_transaction_top_up(
    api: httpx.AsyncClient, app: FastAPI, ask: Ask
) -> None:
    card = await funded_card(api, 5)
    rule = await set_auto_topup(api, card, "failed-tx", Amount=25, MonthlyLimit=100)
    assert rule.status_code == 200, rule.text
    await ask(card, 1000, "net-fu-3")
    assert await _run(app) == 1
    assert await card_balance(api, card) == Decimal(30)
    assert await _run(app) == 0
    assert await card_balance(api, card) == Decimal(30)


async def test_a_real_time_approval_runs_the_low_balance_top_up(
    api: httpx.AsyncClient, app: FastAPI, ask: Ask
) -> None:
    card = await funded_card(api, 50)
    rule = await set_auto_topup(api, card, "low-balance", Threshold=20, Amount=30, MonthlyLimit=100)
    assert rule.status_code == 200, rule.text
    answer = await ask(card, 3500, "net-fu-4")
    assert answer["Approved"] is True
    assert await card_balance(api, card) == Decimal(15)
    assert await _run(app) == 1
    assert await card_balance(api, card) == Decimal(45)
    assert await _due(app) == []


async def test_an_approval_without_a_low_balance_top_up_has_nothing_to_follow(
    api: httpx.AsyncClient, app: FastAPI, ask: Ask
) -> None:
    card = await funded_card(api, 50)
    rule = await set_auto_topup(api, card, "failed-tx", Amount=30, MonthlyLimit=100)
    assert rule.status_code == 200, rule.text
    assert (await ask(card, 4900, "net-fu-8"))["Approved"] is True
    assert len(await _due(app)) == 1
    assert await _run(app) == 0
    assert await _due(app) == []
    assert await card_balance(api, card) == Decimal(1)


async def test_a_follow_up_that_fails_is_due_again_later_and_the_others_run(
    api: httpx.AsyncClient, app: FastAPI, ask: Ask, monkeypatch: pytest.MonkeyPatch
) -> None:
    failing, paying = await funded_card(api, 10), await funded_card(api, 10)
    await set_fees(api, failing, DeclineFee=2.5)
    await ask(failing, 5000, "net-fu-5")
    await ask(paying, 5000, "net-fu-6")
    charge = decline_fees.charge

    async def broken_for_one(*args: Any, **kwargs: Any) -> decline_fees.DeclineFee:
        if kwargs["transaction_id"] == "net-fu-5":
            raise RuntimeError("a fault the follow-up did not expect")
        return await charge(*args, **kwargs)

    monkeypatch.setattr(decline_fees, "charge", broken_for_one)
    assert await _run(app) == 1
    assert await _due(app) == []  # due again a minute later, behind the others
    monkeypatch.setattr(decline_fees, "charge", charge)
    later = utcnow() + follow_up.RETRY_AFTER + timedelta(seconds=1)
    assert await follow_up.run_due(app.state.session_factory, app.state.providers, now=later) == 1
    assert await card_balance(api, failing) == Decimal("7.5")


async def test_a_sandbox_purchase_leaves_nothing_to_follow_up(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await funded_card(api, 10)
    await set_fees(api, card, DeclineFee=2.5)
    answer = await authorize(api, card, 50)
    assert (answer["Approved"], answer["DeclineFeeStatus"]) == (False, "COLLECTED")
    assert await _due(app) == []


async def test_a_partner_hosted_purchase_has_no_follow_up(
    api: httpx.AsyncClient, app: FastAPI, ask: Ask
) -> None:
    card = await funded_card(api, 10)
    async with partner_hosted(api) as (partner, _):
        partner.default_balance = Decimal(0)
        answer = await ask(card, 5000, "net-fu-7")
    assert answer["Approved"] is False
    assert await _due(app) == []
