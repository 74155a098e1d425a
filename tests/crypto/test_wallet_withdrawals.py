"""Wallet withdrawals (`bankprov-to-wallet`): the amount and its network fee reserved at
initiate, an emailed one-time code (hashed, expiring, locked after five wrong tries), the
destination checked for its chain, a cooling-off for a new address, one broadcast whatever
the retries, and the ledger posted or released with the chain's outcome."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from finplat.crypto.withdrawals import codes
from finplat.crypto.withdrawals import service as withdrawals
from finplat.kit.clock import set_clock, utcnow
from finplat.providers.crypto.sandbox.withdrawals import NETWORK_FEES
from finplat.reconciliation.service import reconcile
from tests.conftest import Tenant
from tests.crypto.steps import PAIRS, credited_user, crypto_balance
from tests.crypto.withdrawal_steps import (
    code_of,
    confirm,
    external_address,
    initiate,
    initiated,
    settle,
    transfer,
    wrong,
)
from tests.onboarding import approved_user, create_user, set_fault

TRANSFERS = "/api/v2/crypto-virtual-accounts/transfers"


@pytest.fixture
def no_cooling_off(app: FastAPI) -> None:
    """The operator turned the cooling-off off (`FINPLAT_CRYPTO_WITHDRAWAL_COOLING_OFF_HOURS=0`)."""
    app.state.settings = app.state.settings.model_copy(
        update={"crypto_withdrawal_cooling_off_hours": 0}
    )


def later(delta: timedelta) -> None:
    moved = utcnow() + delta
    set_clock(lambda: moved)


async def _balance(api: httpx.AsyncClient, user_id: int, currency: str = "USDC") -> Any:
    return await crypto_balance(api, user_id, currency)


async def _events(api: httpx.AsyncClient) -> list[str]:
    response = await api.get("/api/v2/events", params={"pageSize": 100})
    assert response.status_code == 200, response.text
    return [e["Type"] for e in response.json()["Items"] if e["Type"].startswith("crypto.wallet_")]


async def _confirmed(
    api: httpx.AsyncClient, user_id: int, address: str, amount: str = "40", **kw: Any
) -> dict[str, Any]:
    started = await initiated(api, user_id, address, amount=amount, **kw)
    code = await code_of(api, user_id, started["TransferId"])
    response = await confirm(api, user_id, started["TransferId"], code)
    assert response.status_code == 200, response.text
    return dict(response.json())


# ------------------------------------------------------------------------------- initiate


async def test_initiate_reserves_the_amount_and_the_network_fee(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    address = external_address(1)
    started = await initiated(api, user["Id"], address, amount="40")
    assert started["Status"] == "PENDING_VERIFICATION"
    assert started["Type"] == "WALLET_WITHDRAWAL"
    assert started["DestinationAddress"] == address
    assert Decimal(str(started["NetworkFee"])) == 5  # Ethereum's, in the sandbox
    assert Decimal(str(started["TotalAmount"])) == 45
    assert started["AttemptsLeft"] == 5
    assert "Code" not in started
    balance = await _balance(api, user["Id"])
    assert Decimal(str(balance["Available"])) == 55
    assert Decimal(str(balance["PendingDebits"])) == 45


async def test_the_network_fee_is_the_chains(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100", chain_id=137)
    started = await initiated(api, user["Id"], external_address(137), amount="10", chain_id=137)
    assert Decimal(str(started["NetworkFee"])) == Decimal("0.1")
    assert started["Network"] == "POLYGON"


def last_character_changed(address: str) -> str:
    """The address with another last character (one in 58 random addresses ends with `1`)."""
    return address[:-1] + ("2" if address.endswith("1") else "1")


@pytest.mark.parametrize(
    ("chain_id", "address"),
    [
        (1, "not-an-address"),
        (1, external_address(-200)),  # a Tron address on Ethereum
        (-200, external_address(1)),  # an EVM address on Tron
        (137, "0x" + "12" * 19),  # 19 bytes
        (42161, external_address(1).swapcase()),  # a mixed case whose checksum fails
        (-200, last_character_changed(external_address(-200))),  # a broken base58 checksum
    ],
    # The addresses are random: ids that every pytest-xdist worker collects alike.
    ids=["garbage", "tron-on-ethereum", "evm-on-tron", "19-bytes", "bad-checksum", "bad-base58"],
)
async def test_a_destination_not_of_the_chain_is_400(
    api: httpx.AsyncClient, chain_id: int, address: str
) -> None:
    user, _ = await credited_user(api, "100")
    response = await initiate(api, user["Id"], address, chain_id=chain_id)
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["Code"] == "VALIDATION_ERROR"
    assert "DestinationAddress" in body["ValidationErrors"]
    assert Decimal(str((await _balance(api, user["Id"]))["PendingDebits"])) == 0


async def test_an_all_lower_case_evm_address_is_taken_and_stored_checksummed(
    api: httpx.AsyncClient,
) -> None:
    user, _ = await credited_user(api, "100")
    address = external_address(1)
    started = await initiated(api, user["Id"], address.lower())
    assert started["DestinationAddress"] == address


@pytest.mark.parametrize(
    ("currency", "chain_id"), [("DAI", 1), ("usdc", 1), ("USDC", 56), ("USDT", "1")]
)
async def test_another_coin_or_chain_is_400(
    api: httpx.AsyncClient, currency: str, chain_id: Any
) -> None:
    user = await approved_user(api)
    response = await initiate(
        api, user["Id"], external_address(1), currency=currency, chain_id=chain_id
    )
    assert response.status_code == 400, response.text
    assert response.json()["Code"] == "VALIDATION_ERROR"


async def test_more_than_the_balance_with_the_fee_is_409(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    response = await initiate(api, user["Id"], external_address(1), amount="96")
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "INSUFFICIENT_FUNDS"
    listed = await api.get(TRANSFERS, params={"userId": user["Id"]})
    assert listed.json()["Items"] == []


async def test_an_amount_at_the_edd_threshold_needs_the_edd(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "20000")
    response = await initiate(api, user["Id"], external_address(1), amount="10000")
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "EDD_REQUIRED"


async def test_a_retried_initiate_answers_the_first_withdrawal(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    address = external_address(1)
    first = await initiate(api, user["Id"], address, key="wd-retry")
    again = await initiate(api, user["Id"], address, key="wd-retry")
    assert first.status_code == again.status_code == 201
    assert first.json()["TransferId"] == again.json()["TransferId"]
    assert Decimal(str((await _balance(api, user["Id"]))["PendingDebits"])) == 45


async def test_an_unverified_user_cannot_withdraw(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await initiate(api, user["Id"], external_address(1))
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "KYC_NOT_APPROVED"


# --------------------------------------------------------------------------- the code


async def test_the_stored_code_is_a_hash_keyed_with_the_server_secret(
    api: httpx.AsyncClient, app: FastAPI, tenant: Tenant
) -> None:
    user, _ = await credited_user(api, "100")
    started = await initiated(api, user["Id"], external_address(1))
    transfer_id = started["TransferId"]
    code = await code_of(api, user["Id"], transfer_id)
    async with app.state.session_factory() as session:
        row = await withdrawals.withdrawal_of(
            session, company_id=tenant.company_id, transfer_id=transfer_id
        )
    assert row is not None
    key = codes.code_key(app.state.settings)
    assert row.code_hash == codes.code_hash(key, transfer_id, code)
    assert row.code_hash != hashlib.sha256(f"{transfer_id}:{code}".encode()).hexdigest()
    assert code not in row.code_hash


async def test_a_wrong_code_is_403_with_the_attempts_left(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    started = await initiated(api, user["Id"], external_address(1))
    code = await code_of(api, user["Id"], started["TransferId"])
    response = await confirm(api, user["Id"], started["TransferId"], wrong(code))
    assert response.status_code == 403, response.text
    assert response.json()["Code"] == "INVALID_VERIFICATION_CODE"
    assert "4 attempt(s) left" in response.json()["Message"]
    assert code not in response.text
    assert (await transfer(api, user["Id"], started["TransferId"]))["Status"] == (
        "PENDING_VERIFICATION"
    )


async def test_the_fifth_wrong_code_locks_and_releases(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    started = await initiated(api, user["Id"], external_address(1))
    code = await code_of(api, user["Id"], started["TransferId"])
    for _ in range(4):
        response = await confirm(api, user["Id"], started["TransferId"], wrong(code))
        assert response.status_code == 403
    response = await confirm(api, user["Id"], started["TransferId"], wrong(code))
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "WITHDRAWAL_LOCKED"
    # Locked: even the right code no longer sends it.
    after = await confirm(api, user["Id"], started["TransferId"], code)
    assert after.json()["Status"] == "FAILED"
    balance = await _balance(api, user["Id"])
    assert Decimal(str(balance["Available"])) == 100
    assert Decimal(str(balance["PendingDebits"])) == 0
    assert "crypto.wallet_withdrawal.failed" in await _events(api)


async def test_a_late_code_expires_the_withdrawal_and_releases(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    started = await initiated(api, user["Id"], external_address(1))
    code = await code_of(api, user["Id"], started["TransferId"])
    later(timedelta(minutes=11))
    response = await confirm(api, user["Id"], started["TransferId"], code)
    assert response.status_code == 409, response.text
    assert response.json()["Code"] == "VERIFICATION_EXPIRED"
    assert (await transfer(api, user["Id"], started["TransferId"]))["Status"] == "EXPIRED"
    assert Decimal(str((await _balance(api, user["Id"]))["Available"])) == 100


async def test_an_unconfirmed_withdrawal_expires_on_its_own(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    started = await initiated(api, user["Id"], external_address(1))
    later(timedelta(minutes=11))
    assert (await transfer(api, user["Id"], started["TransferId"]))["Status"] == "EXPIRED"
    assert Decimal(str((await _balance(api, user["Id"]))["PendingDebits"])) == 0
    assert "crypto.wallet_withdrawal.expired" in await _events(api)


async def test_another_users_withdrawal_is_404(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    other = await approved_user(api)
    started = await initiated(api, user["Id"], external_address(1))
    code = await code_of(api, user["Id"], started["TransferId"])
    response = await confirm(api, other["Id"], started["TransferId"], code)
    assert response.status_code == 404, response.text
    assert response.json()["Code"] == "TRANSFER_NOT_FOUND"


# ---------------------------------------------------------------------- cooling-off


async def test_a_new_address_cools_off_before_it_is_sent(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    done = await _confirmed(api, user["Id"], external_address(1))
    assert done["Status"] == "COOLING_OFF"
    assert done["TxHash"] is None
    assert done["ReleaseAt"] is not None
    later(timedelta(hours=23))
    assert (await transfer(api, user["Id"], done["TransferId"]))["Status"] == "COOLING_OFF"
    later(timedelta(hours=2))
    assert (await transfer(api, user["Id"], done["TransferId"]))["Status"] == "PENDING"
    assert "crypto.wallet_withdrawal.cooling_off" in await _events(api)


async def test_an_address_already_sent_to_skips_the_cooling_off(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    address = external_address(1)
    first = await _confirmed(api, user["Id"], address, amount="10")
    later(timedelta(hours=25))
    await transfer(api, user["Id"], first["TransferId"])
    second = await _confirmed(api, user["Id"], address, amount="10")
    assert second["Status"] == "PENDING"
    assert second["TxHash"]


# --------------------------------------------------------------------- broadcast and outcome


@pytest.mark.usefixtures("no_cooling_off")
async def test_a_confirmed_withdrawal_is_sent_and_completes_with_the_fee_posted(
    api: httpx.AsyncClient,
) -> None:
    user, _ = await credited_user(api, "100")
    sent = await _confirmed(api, user["Id"], external_address(1))
    assert sent["Status"] == "PENDING"
    assert sent["TxHash"].startswith("0x")
    done = await settle(api, user["Id"], sent["TransferId"], "CONFIRMED")
    assert done["Status"] == "COMPLETED"
    balance = await _balance(api, user["Id"])
    assert Decimal(str(balance["Posted"])) == 55
    assert Decimal(str(balance["PendingDebits"])) == 0
    listed = await transfer(api, user["Id"], sent["TransferId"])
    assert listed["Type"] == "WALLET_WITHDRAWAL"
    assert listed["Status"] == "COMPLETED"
    assert Decimal(str(listed["FeeAmount"])) == 5
    assert await _events(api) == [
        "crypto.wallet_withdrawal.completed",
        "crypto.wallet_withdrawal.pending",
        "crypto.wallet_withdrawal.pending_verification",
    ]


@pytest.mark.usefixtures("no_cooling_off")
async def test_a_failed_withdrawal_releases_the_amount_and_fee(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    sent = await _confirmed(api, user["Id"], external_address(-200), chain_id=-200)
    done = await settle(api, user["Id"], sent["TransferId"], "FAILED")
    assert done["Status"] == "FAILED"
    assert done["StatusReason"]
    balance = await _balance(api, user["Id"])
    assert Decimal(str(balance["Available"])) == 100


@pytest.mark.usefixtures("no_cooling_off")
async def test_a_repeated_confirm_answers_the_one_broadcast(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    user, _ = await credited_user(api, "100")
    started = await initiated(api, user["Id"], external_address(1))
    code = await code_of(api, user["Id"], started["TransferId"])
    first = await confirm(api, user["Id"], started["TransferId"], code, key="c-1")
    second = await confirm(api, user["Id"], started["TransferId"], code, key="c-2")
    replay = await confirm(api, user["Id"], started["TransferId"], code, key="c-1")
    assert first.json()["TxHash"] == second.json()["TxHash"] == replay.json()["TxHash"]
    rail = app.state.providers.crypto
    count = await rail.broadcasts(
        company_id=await _company(app, started["TransferId"]),
        idempotency_key=f"wallet-withdrawal:{started['TransferId']}",
    )
    assert count == 1


async def _company(app: FastAPI, transfer_id: str) -> int:
    from sqlalchemy import select

    from finplat.crypto.transfers.models import CryptoTransfer

    async with app.state.session_factory() as session:
        stmt = select(CryptoTransfer.company_id).where(CryptoTransfer.id == transfer_id)
        return int((await session.execute(stmt)).scalar_one())


@pytest.mark.usefixtures("no_cooling_off")
async def test_a_rail_refusal_fails_the_withdrawal_and_releases(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    started = await initiated(api, user["Id"], external_address(1))
    code = await code_of(api, user["Id"], started["TransferId"])
    await set_fault(api, "crypto", "withdraw", "error")
    response = await confirm(api, user["Id"], started["TransferId"], code)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "FAILED"
    assert Decimal(str((await _balance(api, user["Id"]))["Available"])) == 100


@pytest.mark.usefixtures("no_cooling_off")
async def test_a_rail_timeout_stays_pending_and_a_read_finds_it(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    started = await initiated(api, user["Id"], external_address(1))
    code = await code_of(api, user["Id"], started["TransferId"])
    await set_fault(api, "crypto", "withdraw", "timeout")
    response = await confirm(api, user["Id"], started["TransferId"], code)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "PENDING"
    assert response.json()["TxHash"] is None
    await transfer(api, user["Id"], started["TransferId"])  # asks the rail by key
    done = await settle(api, user["Id"], started["TransferId"], "CONFIRMED")
    assert done["Status"] == "COMPLETED"
    assert done["TxHash"]


async def test_withdrawals_are_listed_by_type_and_status(api: httpx.AsyncClient) -> None:
    user, _ = await credited_user(api, "100")
    started = await initiated(api, user["Id"], external_address(1), amount="10")
    listed = await api.get(
        TRANSFERS,
        params={
            "userId": user["Id"],
            "types": "WALLET_WITHDRAWAL",
            "statuses": "PENDING_VERIFICATION",
        },
    )
    assert listed.status_code == 200, listed.text
    assert [t["TransferId"] for t in listed.json()["Items"]] == [started["TransferId"]]
    other = await api.get(TRANSFERS, params={"userId": user["Id"], "types": "BANKPROV_DEPOSIT"})
    assert other.json()["Items"] == []


# ----------------------------------------------------------------- job and reconciliation


async def test_the_job_expires_lapsed_codes_and_sends_after_the_cooling_off(
    app: FastAPI, api: httpx.AsyncClient
) -> None:
    user, _ = await credited_user(api, "100")
    lapsing = await initiated(api, user["Id"], external_address(1), amount="10")
    cooling = await _confirmed(api, user["Id"], external_address(1), amount="10")
    assert cooling["Status"] == "COOLING_OFF"
    later(timedelta(hours=25))
    factory, providers = app.state.session_factory, app.state.providers
    assert await withdrawals.run_due(factory, providers) == 2
    assert await withdrawals.run_due(factory, providers) == 0
    lapsed = await transfer(api, user["Id"], lapsing["TransferId"])
    assert lapsed["Status"] == "EXPIRED"
    sent = await transfer(api, user["Id"], cooling["TransferId"])
    assert sent["Status"] == "PENDING"
    balance = await _balance(api, user["Id"])
    assert Decimal(str(balance["PendingDebits"])) == 15  # the sent one's 10 and its fee


@pytest.mark.usefixtures("no_cooling_off")
async def test_reconciliation_settles_a_withdrawal_whose_callback_was_lost(
    app: FastAPI, api: httpx.AsyncClient, tenant: Tenant
) -> None:
    user, _ = await credited_user(api, "100")
    sent = await _confirmed(api, user["Id"], external_address(137), amount="10", chain_id=137)
    assert sent["Status"] == "PENDING"
    rail = app.state.providers.crypto
    withdrawal = await rail.withdrawal_by_key(
        company_id=tenant.company_id, idempotency_key=f"wallet-withdrawal:{sent['TransferId']}"
    )
    assert withdrawal is not None
    # The chain confirms it, and the rail's callback never arrives (nothing delivers it here).
    await rail.settle_withdrawal(
        company_id=tenant.company_id, withdrawal_id=withdrawal.withdrawal_id, confirmed=True
    )
    report = await reconcile(
        app.state.session_factory, app.state.providers, company_id=tenant.company_id
    )
    assert [(s.transaction_id, s.status) for s in report.settled] == [
        (sent["TransferId"], "COMPLETED")
    ]
    assert Decimal(str((await _balance(api, user["Id"]))["Posted"])) == Decimal("89.9")


@pytest.mark.usefixtures("no_cooling_off")
@pytest.mark.parametrize(("currency", "chain_id"), PAIRS)
async def test_every_coin_and_chain_sends_exactly_the_amount_and_its_fee(
    api: httpx.AsyncClient, currency: str, chain_id: int
) -> None:
    user, _ = await credited_user(api, "100", currency, chain_id)
    sent = await _confirmed(
        api,
        user["Id"],
        external_address(chain_id),
        amount="12.345678",
        currency=currency,
        chain_id=chain_id,
    )
    fee = Decimal(str(sent["NetworkFee"]))
    assert fee == Decimal(NETWORK_FEES[chain_id]) / 10**6
    assert Decimal(str(sent["TotalAmount"])) == Decimal("12.345678") + fee
    done = await settle(api, user["Id"], sent["TransferId"], "CONFIRMED")
    assert done["Status"] == "COMPLETED"
    balance = await _balance(api, user["Id"], currency)
    assert Decimal(str(balance["Posted"])) == Decimal(100) - Decimal("12.345678") - fee
    assert Decimal(str(balance["PendingDebits"])) == 0
