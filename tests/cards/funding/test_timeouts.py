"""A card provider that times out or fails: the reservation stays pending (never voided on a
guess) until the provider's answer for the same key settles it, exactly once. The ledger is
verified after every test (the `app` fixture)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from finplat.cards.funding.service import FundingStatus
from finplat.providers.errors import ProviderTimeout
from tests.cards.funding.outcome_steps import (
    another_caller_asks_the_provider,
    cancel,
    cards_with_pending,
    clear_faults,
    fundings,
    master,
    provider_movements,
    settle_pending,
)
from tests.cards.funding.steps import active_card, card_balance, set_fees, topup, unload
from tests.onboarding import set_fault

RETRIES = 2  # the test settings' provider retries: a technical failure is tried 3 times


async def _card(api: httpx.AsyncClient) -> dict[str, Any]:
    """An active card, 1000 USD in the master account, the default 1 % top-up fee."""
    return await active_card(api, master=1000.0)


async def _funded_card(api: httpx.AsyncClient) -> dict[str, Any]:
    """An active card holding 100 USD, no fees, 900 USD left in the master account."""
    card = await active_card(api, master=1000.0)
    await set_fees(api, card)
    assert (await topup(api, card, 100)).status_code == 200
    return card


# ------------------------------------------------------------------------------- top-up


async def test_topup_timeout_is_503_and_keeps_the_master_reservation_pending(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _card(api)
    await set_fault(api, "cardprov", "load", "timeout")
    response = await topup(api, card, 50, key="topup-timeout")
    assert response.status_code == 503, response.text
    assert response.json()["Code"] == "PROVIDER_TIMEOUT"
    assert await master(api) == {
        "Posted": Decimal("1000"),
        "PendingDebits": Decimal("50"),
        "Available": Decimal("950"),
    }
    assert await card_balance(api, card) == 0
    assert [r.status for r in await fundings(app, card)] == [FundingStatus.PENDING]


async def test_topup_retried_with_its_key_after_a_timeout_loads_once(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await set_fault(api, "cardprov", "load", "timeout")
    assert (await topup(api, card, 50, key="topup-retry")).status_code == 503
    await clear_faults(api)
    done = await topup(api, card, 50, key="topup-retry")
    assert done.status_code == 200, done.text
    again = await topup(api, card, 50, key="topup-retry")
    assert again.json() == done.json()  # the same OrderId
    assert await card_balance(api, card) == Decimal("49.5")
    assert await master(api) == {
        "Posted": Decimal("950"),
        "PendingDebits": Decimal("0"),
        "Available": Decimal("950"),
    }
    # The provider loaded the card during the lost call; the retry got that answer back.
    assert await provider_movements(api, card) == [Decimal("49.5")]


async def test_topup_retried_while_the_provider_still_times_out_reserves_nothing_more(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await set_fault(api, "cardprov", "load", "timeout", count=2)
    assert (await topup(api, card, 50, key="topup-twice")).status_code == 503
    assert (await topup(api, card, 50, key="topup-twice")).status_code == 503
    assert (await master(api))["PendingDebits"] == Decimal("50")
    assert (await topup(api, card, 50, key="topup-twice")).status_code == 200
    assert await card_balance(api, card) == Decimal("49.5")
    assert (await master(api))["Available"] == Decimal("950")
    assert await provider_movements(api, card) == [Decimal("49.5")]


async def test_topup_after_a_provider_outage_loads_once_on_retry(api: httpx.AsyncClient) -> None:
    card = await _card(api)
    await set_fault(api, "cardprov", "load", "transient", count=1 + RETRIES)
    response = await topup(api, card, 50, key="topup-outage")
    assert response.status_code == 503, response.text
    assert response.json()["Code"] == "PROVIDER_UNAVAILABLE"
    assert await provider_movements(api, card) == []
    assert (await topup(api, card, 50, key="topup-outage")).status_code == 200
    assert await card_balance(api, card) == Decimal("49.5")
    assert await provider_movements(api, card) == [Decimal("49.5")]


# ------------------------------------------------------------------------------- unload


async def test_unload_timeout_is_503_and_keeps_the_card_reservation_pending(
    api: httpx.AsyncClient,
) -> None:
    card = await _funded_card(api)
    await set_fault(api, "cardprov", "unload", "timeout")
    response = await unload(api, card, 40, key="unload-timeout")
    assert response.status_code == 503, response.text
    assert response.json()["Code"] == "PROVIDER_TIMEOUT"
    assert await card_balance(api, card) == Decimal("60")  # 40 reserved
    assert (await master(api))["Posted"] == Decimal("900")  # nothing back yet


async def test_unload_retried_with_its_key_after_a_timeout_unloads_once(
    api: httpx.AsyncClient,
) -> None:
    card = await _funded_card(api)
    await set_fault(api, "cardprov", "unload", "timeout")
    assert (await unload(api, card, 40, key="unload-retry")).status_code == 503
    await clear_faults(api)
    done = await unload(api, card, 40, key="unload-retry")
    assert done.status_code == 200, done.text
    again = await unload(api, card, 40, key="unload-retry")
    assert again.json() == done.json()  # the same TransactionId
    assert await card_balance(api, card) == Decimal("60")
    assert (await master(api))["Available"] == Decimal("940")
    assert await provider_movements(api, card) == [Decimal("-40"), Decimal("100")]


async def test_unload_retry_the_provider_refuses_after_making_it_unloads_once(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _funded_card(api)
    # The provider unloads, but its answer is lost; then it refuses the retry of the same key.
    await set_fault(api, "cardprov", "unload", "timeout")
    assert (await unload(api, card, 40, key="unload-made")).status_code == 503
    await set_fault(api, "cardprov", "unload", "error", HttpStatus=409)
    done = await unload(api, card, 40, key="unload-made")
    assert done.status_code == 200, done.text
    assert [r.status for r in await fundings(app, card)][-1] == FundingStatus.COMPLETED
    assert await card_balance(api, card) == Decimal("60")
    assert await provider_movements(api, card) == [Decimal("-40"), Decimal("100")]


async def test_topup_settled_after_the_provider_made_it_and_refuses_the_repeat_posts_it(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _card(api)
    await set_fault(api, "cardprov", "load", "timeout")
    assert (await topup(api, card, 50)).status_code == 503
    await set_fault(api, "cardprov", "load", "error", HttpStatus=409)
    await settle_pending(app, card)
    assert [r.status for r in await fundings(app, card)] == [FundingStatus.COMPLETED]
    assert await card_balance(api, card) == Decimal("49.5")
    assert (await master(api))["Available"] == Decimal("950")


# ----------------------------------------------------- one caller at a time at the provider


async def _unload_left_pending(api: httpx.AsyncClient, key: str) -> dict[str, Any]:
    """A card holding 100 USD with an unload of 40 reserved, its outcome unknown."""
    card = await _funded_card(api)
    await set_fault(api, "cardprov", "unload", "transient", count=1 + RETRIES)
    assert (await unload(api, card, 40, key=key)).status_code == 503
    return card


async def test_a_retry_while_another_caller_asks_the_provider_is_503_in_progress(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _unload_left_pending(api, "unload-busy")
    await another_caller_asks_the_provider(app, card)
    retried = await unload(api, card, 40, key="unload-busy")
    assert retried.status_code == 503, retried.text
    assert retried.json()["Code"] == "CARD_FUNDING_IN_PROGRESS"
    assert retried.headers["Retry-After"] == "1"
    assert [r.status for r in await fundings(app, card)][-1] == FundingStatus.PENDING
    assert await provider_movements(api, card) == [Decimal("100")]


async def test_settling_leaves_a_funding_another_caller_is_asking_the_provider_for(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _unload_left_pending(api, "unload-settle-busy")
    await another_caller_asks_the_provider(app, card)
    await settle_pending(app, card)
    assert [r.status for r in await fundings(app, card)][-1] == FundingStatus.PENDING
    assert await provider_movements(api, card) == [Decimal("100")]


async def test_a_lapsed_provider_call_lease_lets_the_retry_settle_the_funding(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _unload_left_pending(api, "unload-lapsed")
    await another_caller_asks_the_provider(app, card, seconds=-1)
    done = await unload(api, card, 40, key="unload-lapsed")
    assert done.status_code == 200, done.text
    assert await provider_movements(api, card) == [Decimal("-40"), Decimal("100")]
    assert await card_balance(api, card) == Decimal("60")


# ----------------------------------------------------------- fundings no request will retry


async def test_keyless_topup_left_pending_by_a_timeout_is_settled_from_the_provider(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _card(api)
    await set_fault(api, "cardprov", "load", "timeout")
    assert (await topup(api, card, 50)).status_code == 503
    await settle_pending(app, card)
    assert await card_balance(api, card) == Decimal("49.5")
    assert await master(api) == {
        "Posted": Decimal("950"),
        "PendingDebits": Decimal("0"),
        "Available": Decimal("950"),
    }
    assert [r.status for r in await fundings(app, card)] == [FundingStatus.COMPLETED]
    assert await provider_movements(api, card) == [Decimal("49.5")]
    assert await cards_with_pending(app, card) == []


async def test_settling_a_topup_the_provider_never_made_and_now_refuses_releases_it(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _card(api)
    await set_fault(api, "cardprov", "load", "transient", count=1 + RETRIES)
    assert (await topup(api, card, 50, key="topup-refused")).status_code == 503
    await set_fault(api, "cardprov", "load", "error", HttpStatus=409)
    await settle_pending(app, card)
    assert [r.status for r in await fundings(app, card)] == [FundingStatus.FAILED]
    assert (await master(api))["Available"] == Decimal("1000")
    # The request's own retry learns of the refusal; it never answers success.
    retried = await topup(api, card, 50, key="topup-refused")
    assert retried.status_code == 409, retried.text
    assert retried.json()["Code"] == "CARD_FUNDING_FAILED"
    assert await card_balance(api, card) == 0
    assert await provider_movements(api, card) == []


async def test_settling_while_the_provider_still_times_out_keeps_the_reservation(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _card(api)
    await set_fault(api, "cardprov", "load", "timeout", count=2)
    assert (await topup(api, card, 50)).status_code == 503
    with pytest.raises(ProviderTimeout):
        await settle_pending(app, card)
    assert [r.status for r in await fundings(app, card)] == [FundingStatus.PENDING]
    assert (await master(api))["PendingDebits"] == Decimal("50")


async def test_keyless_topup_left_pending_is_settled_before_the_card_is_cancelled(
    api: httpx.AsyncClient,
) -> None:
    card = await _card(api)
    await set_fees(api, card)
    await set_fault(api, "cardprov", "load", "timeout")
    assert (await topup(api, card, 50)).status_code == 503
    cancelled = await cancel(api, card)
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["Status"] == "CANCELLED"
    # The load the provider made is confirmed, then returned with the rest of the balance.
    assert await master(api) == {
        "Posted": Decimal("1000"),
        "PendingDebits": Decimal("0"),
        "Available": Decimal("1000"),
    }


async def test_a_decline_fee_the_provider_leaves_unanswered_is_pending_and_settled_at_cancellation(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    card = await _funded_card(api)
    await set_fees(api, card, DeclineFee=2.5)
    await set_fault(api, "cardprov", "unload", "timeout")
    declined = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": card["UserId"]},
        json={"Amount": 500, "Currency": "USD", "Merchant": "Too dear"},
    )
    # The decline stands; the fee's unload went unanswered, so the fee stays reserved.
    assert declined.status_code == 200, declined.text
    assert declined.json()["Status"] == "DECLINED"
    assert (declined.json()["DeclineFee"], declined.json()["DeclineFeeStatus"]) == (2.5, "PENDING")
    assert await card_balance(api, card) == Decimal("97.5")
    cancelled = await cancel(api, card)
    assert cancelled.status_code == 200, cancelled.text
    assert (await master(api))["Available"] == Decimal("997.5")
    kinds = [(r.kind, r.status) for r in await fundings(app, card)]
    assert ("DECLINE_FEE", FundingStatus.COMPLETED) in kinds
