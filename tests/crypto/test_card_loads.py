"""Crypto card loads: an Idempotency-Key is required, the spec's settlement currencies and
chains only, the coins reserved until final on chain, the card credited once when confirmed,
nothing lost when the chain or the card refuses."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from finplat.crypto.cardloads.service import credit_due
from finplat.providers.crypto.sandbox.card_transfers import SandboxCardTransfer
from finplat.reconciliation.service import reconcile
from tests.cards.funding.steps import card_balance, set_fees
from tests.conftest import Tenant
from tests.crypto.card_steps import (
    CARD_LOADS,
    card_load,
    confirm_load,
    crypto_card_user,
)
from tests.crypto.steps import PAIRS, crypto_balance
from tests.onboarding import set_fault


async def test_a_load_without_an_idempotency_key_is_400(api: httpx.AsyncClient) -> None:
    user, card = await crypto_card_user(api)
    response = await card_load(api, user["Id"], card["Id"], key=None)
    assert response.status_code == 400
    assert response.json()["Code"] == "IDEMPOTENCY_KEY_REQUIRED"
    assert response.json()["Message"]
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 100


@pytest.mark.parametrize(("currency", "chain_id"), PAIRS)
async def test_every_settlement_currency_and_chain_loads_the_card(
    api: httpx.AsyncClient, currency: str, chain_id: int
) -> None:
    user, card = await crypto_card_user(api, "100", currency, chain_id)
    await set_fees(api, card)
    response = await card_load(api, user["Id"], card["Id"], "40", currency, chain_id)
    assert response.status_code == 201, response.text
    load = response.json()
    assert load["Status"] == "PENDING"
    assert (load["CryptoCurrency"], load["ChainId"]) == (currency, chain_id)
    done = await confirm_load(api, user["Id"], load["LoadId"])
    assert done["Status"] == "COMPLETED"
    assert await card_balance(api, card) == Decimal(40)


@pytest.mark.parametrize(
    ("currency", "chain_id", "field"),
    [
        ("DAI", 1, "crypto_currency"),
        ("usdc", 1, "crypto_currency"),
        ("BTC", 137, "crypto_currency"),
        ("USDC", 56, "chain_id"),
        ("USDT", 200, "chain_id"),
        ("USDC", 0, "chain_id"),
        ("USDC", "1", "chain_id"),
    ],
)
async def test_another_settlement_currency_or_chain_is_400(
    api: httpx.AsyncClient, currency: str, chain_id: object, field: str
) -> None:
    user, card = await crypto_card_user(api)
    response = await api.post(
        CARD_LOADS,
        params={"userId": user["Id"]},
        json={
            "CardId": card["Id"],
            "Amount": 10,
            "crypto_currency": currency,
            "chain_id": chain_id,
        },
        headers={"Idempotency-Key": "bad-pair"},
    )
    assert response.status_code == 400, response.text
    assert field in response.json()["ValidationErrors"]
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 100


@pytest.mark.parametrize("amount", ["4.99", "250000.01", "10.001"])
async def test_an_amount_outside_the_top_up_range_is_400(
    api: httpx.AsyncClient, amount: str
) -> None:
    user, card = await crypto_card_user(api)
    response = await card_load(api, user["Id"], card["Id"], amount)
    assert response.status_code == 400, response.text
    assert "Amount" in response.json()["ValidationErrors"]


async def test_a_pending_load_reserves_the_coins_and_credits_nothing(
    api: httpx.AsyncClient,
) -> None:
    user, card = await crypto_card_user(api)
    load = (await card_load(api, user["Id"], card["Id"], "30")).json()
    balance = await crypto_balance(api, user["Id"])
    assert Decimal(str(balance["Available"])) == 70
    assert Decimal(str(balance["PendingDebits"])) == 30
    assert await card_balance(api, card) == 0
    read = await api.get(f"{CARD_LOADS}/{load['LoadId']}", params={"userId": user["Id"]})
    assert read.json()["Status"] == "PENDING"


async def test_a_confirmed_load_credits_the_card_once_with_its_top_up_fee(
    api: httpx.AsyncClient,
) -> None:
    user, card = await crypto_card_user(api)
    await set_fees(api, card, TopupFixedFee=1)
    load = (await card_load(api, user["Id"], card["Id"], "30")).json()
    done = await confirm_load(api, user["Id"], load["LoadId"])
    assert done["Status"] == "COMPLETED"
    assert done["OrderId"] is not None
    assert await card_balance(api, card) == Decimal(29)
    balance = await crypto_balance(api, user["Id"])
    assert Decimal(str(balance["Posted"])) == 70
    assert Decimal(str(balance["PendingDebits"])) == 0
    again = await api.post(
        f"/api/v2/sandbox/crypto/card-loads/{load['LoadId']}/confirm",
        params={"userId": user["Id"]},
        json={"Outcome": "CONFIRMED"},
    )
    assert again.status_code == 409
    assert again.json()["Code"] == "CARD_LOAD_NOT_PENDING"
    assert await card_balance(api, card) == Decimal(29)


async def test_a_retry_with_the_same_key_answers_the_first_load(api: httpx.AsyncClient) -> None:
    user, card = await crypto_card_user(api)
    first = await card_load(api, user["Id"], card["Id"], "20", key="same-load")
    again = await card_load(api, user["Id"], card["Id"], "20", key="same-load")
    assert again.status_code == 201
    assert again.json()["LoadId"] == first.json()["LoadId"]
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 80


async def test_a_load_failed_on_chain_gives_the_coins_back(api: httpx.AsyncClient) -> None:
    user, card = await crypto_card_user(api)
    load = (await card_load(api, user["Id"], card["Id"], "30")).json()
    failed = await confirm_load(api, user["Id"], load["LoadId"], "FAILED")
    assert failed["Status"] == "FAILED"
    assert failed["StatusReason"]
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 100
    assert await card_balance(api, card) == 0


async def test_a_card_that_refuses_the_credit_gives_the_coins_back(
    api: httpx.AsyncClient,
) -> None:
    user, card = await crypto_card_user(api)
    load = (await card_load(api, user["Id"], card["Id"], "30")).json()
    await set_fault(api, "cardprov", "load", "error")
    done = await confirm_load(api, user["Id"], load["LoadId"])
    assert done["Status"] == "FAILED"
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Available"])) == 100
    assert await card_balance(api, card) == 0


async def test_more_than_the_crypto_balance_is_409(api: httpx.AsyncClient) -> None:
    user, card = await crypto_card_user(api, "20")
    response = await card_load(api, user["Id"], card["Id"], "25")
    assert response.status_code == 409
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"


async def test_another_users_card_or_load_is_404(api: httpx.AsyncClient) -> None:
    user, card = await crypto_card_user(api)
    other, other_card = await crypto_card_user(api)
    response = await card_load(api, user["Id"], other_card["Id"], "10")
    assert response.status_code == 404
    assert response.json()["Code"] == "CARD_NOT_FOUND"
    load = (await card_load(api, user["Id"], card["Id"], "10", key="mine")).json()
    read = await api.get(f"{CARD_LOADS}/{load['LoadId']}", params={"userId": other["Id"]})
    assert read.status_code == 404
    assert read.json()["Code"] == "CARD_LOAD_NOT_FOUND"


async def test_a_rail_timeout_leaves_the_load_pending_and_a_read_finds_it(
    api: httpx.AsyncClient,
) -> None:
    user, card = await crypto_card_user(api)
    await set_fees(api, card)
    await set_fault(api, "crypto", "send_card_load", "timeout")
    response = await card_load(api, user["Id"], card["Id"], "10", key="load-timeout")
    assert response.status_code == 201, response.text
    load = response.json()
    assert load["Status"] == "PENDING"
    done = await confirm_load(api, user["Id"], load["LoadId"])
    assert done["Status"] == "COMPLETED"
    assert await card_balance(api, card) == Decimal(10)


async def test_reconciliation_settles_a_load_whose_callback_was_lost(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, card = await crypto_card_user(api)
    await set_fees(api, card)
    load = (await card_load(api, user["Id"], card["Id"], "30", key="lost")).json()
    factory = app.state.session_factory
    report = await reconcile(factory, app.state.providers, company_id=tenant.company_id)
    assert [(p.transaction_id, p.type) for p in report.pending] == [
        (load["LoadId"], "CRYPTO_CARD_LOAD")
    ]
    async with factory() as session:
        reference = (
            await session.execute(
                select(SandboxCardTransfer.reference).where(
                    SandboxCardTransfer.company_id == tenant.company_id
                )
            )
        ).scalar_one()
    # The chain confirms it, and the rail's callback never arrives (nothing delivers it).
    await app.state.providers.crypto.settle_card_transfer(
        company_id=tenant.company_id, reference=reference, completed=True
    )
    report = await reconcile(factory, app.state.providers, company_id=tenant.company_id)
    assert [(s.transaction_id, s.status) for s in report.settled] == [(load["LoadId"], "CONFIRMED")]
    # The job credits it, once however often it runs.
    for _ in range(2):
        await credit_due(factory, app.state.providers, company_id=tenant.company_id)
    assert await card_balance(api, card) == Decimal(30)
    read = await api.get(f"{CARD_LOADS}/{load['LoadId']}", params={"userId": user["Id"]})
    assert read.json()["Status"] == "COMPLETED"
