"""Deposits to pay-in addresses: pending with confirmations, credited once at the chain's
finality, never credited when reorganised away first, unsupported pairs kept uncredited."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import httpx
import pytest

from finplat.config import Settings
from finplat.crypto.deposits import finality
from tests.callbacks import signed
from tests.conftest import Tenant, TenantFactory
from tests.crypto.steps import add_blocks, crypto_balance, payin_address, reorg, send
from tests.onboarding import approved_user

DEPOSITS = "/api/v2/crypto-virtual-accounts/deposits"


async def _user_and_address(
    api: httpx.AsyncClient, currency: str = "USDC", chain_id: int = 1
) -> tuple[dict[str, Any], str]:
    user = await approved_user(api)
    return user, (await payin_address(api, user["Id"], currency, chain_id))["Address"]


async def _events(api: httpx.AsyncClient) -> list[str]:
    response = await api.get("/api/v2/events", params={"pageSize": 100})
    assert response.status_code == 200, response.text
    return [e["Type"] for e in response.json()["Items"] if e["Domain"] == "crypto"]


@pytest.fixture
def finality_of_3() -> Iterator[None]:
    """Every chain final at 3 blocks, for the duration of a test."""
    before = finality.thresholds()
    finality.configure(dict.fromkeys(before, 3))
    yield
    finality.configure(before)


async def test_a_new_deposit_is_pending_with_its_confirmations(api: httpx.AsyncClient) -> None:
    user, address = await _user_and_address(api)
    deposit = await send(api, address, "250.5", confirmations=2)
    assert deposit["Status"] == "PENDING"
    assert deposit["Confirmations"] == 2
    assert deposit["RequiredConfirmations"] == 64
    assert deposit["UserId"] == user["Id"]
    assert Decimal(str(deposit["Amount"])) == Decimal("250.5")
    assert (await crypto_balance(api, user["Id"]))["Posted"] == 0


async def test_confirmations_accumulate_and_show_in_the_pending_view(
    api: httpx.AsyncClient,
) -> None:
    user, address = await _user_and_address(api, "USDT", -200)
    deposit = await send(api, address, 10, "USDT", -200)
    await add_blocks(api, user["Id"], deposit["DepositId"], 5)
    await add_blocks(api, user["Id"], deposit["DepositId"], 7)
    response = await api.get(DEPOSITS, params={"userId": user["Id"], "statuses": "PENDING"})
    assert response.status_code == 200
    [pending] = response.json()["Items"]
    assert pending["Confirmations"] == 12
    assert pending["RequiredConfirmations"] == 19
    assert pending["Network"] == "TRON"


async def test_a_deposit_is_credited_at_the_chains_finality_threshold(
    api: httpx.AsyncClient,
) -> None:
    user, address = await _user_and_address(api, "USDC", 42161)
    deposit = await send(api, address, "99.123456", "USDC", 42161, confirmations=19)
    assert deposit["Status"] == "PENDING"
    credited = await add_blocks(api, user["Id"], deposit["DepositId"], 1)
    assert credited["Status"] == "CREDITED"
    assert credited["CreditedAt"] is not None
    balance = await crypto_balance(api, user["Id"])
    assert Decimal(str(balance["Available"])) == Decimal("99.123456")
    assert await _events(api) == ["crypto.deposit.credited", "crypto.deposit.pending"]


async def test_blocks_after_the_credit_never_credit_again(api: httpx.AsyncClient) -> None:
    user, address = await _user_and_address(api, "USDC", 137)
    deposit = await send(api, address, 40, "USDC", 137, confirmations=128)
    assert deposit["Status"] == "CREDITED"
    again = await add_blocks(api, user["Id"], deposit["DepositId"], 50)
    assert again["Status"] == "CREDITED"
    assert again["Confirmations"] == 178
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Posted"])) == 40


async def test_finality_is_configurable_per_chain(
    api: httpx.AsyncClient, finality_of_3: None
) -> None:
    user, address = await _user_and_address(api)
    deposit = await send(api, address, 5, confirmations=2)
    assert deposit["RequiredConfirmations"] == 3
    assert (await add_blocks(api, user["Id"], deposit["DepositId"], 1))["Status"] == "CREDITED"


async def test_a_reorg_before_finality_credits_nothing(api: httpx.AsyncClient) -> None:
    user, address = await _user_and_address(api)
    deposit = await send(api, address, 500, confirmations=63)
    reorged = await reorg(api, user["Id"], deposit["DepositId"])
    assert reorged["Status"] == "REORGED"
    # The rail builds no blocks on a dropped transfer; the deposit stays uncredited.
    after = await add_blocks(api, user["Id"], deposit["DepositId"], 100)
    assert after["Status"] == "REORGED"
    assert (await crypto_balance(api, user["Id"]))["Posted"] == 0
    assert "crypto.deposit.credited" not in await _events(api)
    assert "crypto.deposit.reorged" in await _events(api)


async def test_a_reorg_after_the_credit_leaves_the_credit(api: httpx.AsyncClient) -> None:
    user, address = await _user_and_address(api)
    deposit = await send(api, address, 7, confirmations=64)
    after = await reorg(api, user["Id"], deposit["DepositId"])
    assert after["Status"] == "CREDITED"
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Posted"])) == 7


@pytest.mark.parametrize(
    ("sent_currency", "sent_chain"),
    [("USDT", 1), ("DAI", 1), ("USDC", 137), ("USDC", 56)],
)
async def test_a_token_or_chain_the_address_was_not_issued_for_is_kept_unsupported(
    api: httpx.AsyncClient, sent_currency: str, sent_chain: int
) -> None:
    user, address = await _user_and_address(api, "USDC", 1)
    deposit = await send(api, address, "12.5", sent_currency, sent_chain, confirmations=1000)
    assert deposit["Status"] == "UNSUPPORTED"
    assert deposit["CryptoCurrency"] == sent_currency
    assert deposit["ChainId"] == sent_chain
    assert deposit["Reason"]
    assert deposit["UserId"] == user["Id"]
    assert (await crypto_balance(api, user["Id"]))["Posted"] == 0
    assert (await crypto_balance(api, user["Id"], "USDT"))["Posted"] == 0
    listed = await api.get(DEPOSITS, params={"userId": user["Id"], "statuses": "UNSUPPORTED"})
    assert [d["DepositId"] for d in listed.json()["Items"]] == [deposit["DepositId"]]
    assert await _events(api) == ["crypto.deposit.unsupported"]


async def test_more_decimals_than_the_stablecoin_has_is_unsupported(
    api: httpx.AsyncClient,
) -> None:
    _, address = await _user_and_address(api)
    deposit = await send(api, address, "1.0000001", confirmations=100)
    assert deposit["Status"] == "UNSUPPORTED"


async def test_an_address_in_any_letter_case_finds_its_user(api: httpx.AsyncClient) -> None:
    _, address = await _user_and_address(api)
    deposit = await send(api, address.lower(), 3, confirmations=64)
    assert deposit["Status"] == "CREDITED"
    assert deposit["Address"] == address


async def test_an_address_the_rail_never_issued_is_404(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/api/v2/sandbox/crypto/deposits",
        json={
            "Address": "0x" + "ab" * 20,
            "Currency": "USDC",
            "ChainId": 1,
            "Amount": 1,
        },
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "ADDRESS_NOT_FOUND"


async def test_a_tron_address_cannot_receive_on_an_evm_chain(api: httpx.AsyncClient) -> None:
    _, address = await _user_and_address(api, "USDT", -200)
    response = await api.post(
        "/api/v2/sandbox/crypto/deposits",
        json={"Address": address, "Currency": "USDT", "ChainId": 1, "Amount": 1},
    )
    assert response.status_code == 409
    assert response.json()["Code"] == "ADDRESS_NOT_ON_CHAIN"


async def test_another_users_deposit_is_404(api: httpx.AsyncClient) -> None:
    _, address = await _user_and_address(api)
    other = await approved_user(api)
    deposit = await send(api, address, 1)
    response = await api.get(f"{DEPOSITS}/{deposit['DepositId']}", params={"userId": other["Id"]})
    assert response.status_code == 404
    assert response.json()["Code"] == "DEPOSIT_NOT_FOUND"


def _report(settings: Settings, tenant: Tenant, event_id: str, **data: Any) -> dict[str, Any]:
    return signed(
        settings.provider_callback_secret,
        company_id=tenant.company_id,
        type_="deposit.updated",
        data=data,
        event_id=event_id,
    )


async def test_reports_repeated_or_out_of_order_credit_once(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, settings: Settings, tenant: Tenant
) -> None:
    user, address = await _user_and_address(api)
    final: dict[str, Any] = {
        "depositId": "rail_dep_1",
        "txHash": "0x" + "12" * 32,
        "address": address,
        "chainId": 1,
        "token": "USDC",
        "amount": "30",
        "confirmations": 70,
        "status": "SEEN",
    }
    # The final report first, then again under a new event id, then a late, older one.
    for n, confirmations in enumerate((70, 70, 3)):
        callback = _report(
            settings, tenant, f"crypto_evt_{n}", **(final | {"confirmations": confirmations})
        )
        response = await anonymous.post("/providers/crypto/callbacks", **callback)
        assert response.status_code == 200, response.text
    [deposit] = (await api.get(DEPOSITS, params={"userId": user["Id"]})).json()["Items"]
    assert deposit["Status"] == "CREDITED"
    assert deposit["Confirmations"] == 70
    assert Decimal(str((await crypto_balance(api, user["Id"]))["Posted"])) == 30


@pytest.mark.parametrize(
    "change",
    [{"amount": "1e3"}, {"amount": 30}, {"confirmations": -1}, {"status": "GONE"}, {"token": ""}],
)
async def test_a_malformed_report_is_refused_and_changes_nothing(
    api: httpx.AsyncClient,
    anonymous: httpx.AsyncClient,
    settings: Settings,
    tenant: Tenant,
    change: dict[str, Any],
) -> None:
    user, address = await _user_and_address(api)
    data: dict[str, Any] = {
        "depositId": "rail_dep_2",
        "txHash": "0x" + "34" * 32,
        "address": address,
        "chainId": 1,
        "token": "USDC",
        "amount": "30",
        "confirmations": 70,
        "status": "SEEN",
    } | change
    response = await anonymous.post(
        "/providers/crypto/callbacks", **_report(settings, tenant, "crypto_evt_bad", **data)
    )
    assert response.status_code == 400
    assert response.json()["Code"] == "MALFORMED_CALLBACK"
    assert (await api.get(DEPOSITS, params={"userId": user["Id"]})).json()["Items"] == []


async def test_another_company_cannot_send_to_an_address_it_did_not_get(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    _, address = await _user_and_address(api)
    other = await make_tenant("Other Ltd")
    response = await other.client.post(
        "/api/v2/sandbox/crypto/deposits",
        json={"Address": address, "Currency": "USDC", "ChainId": 1, "Amount": 1},
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "ADDRESS_NOT_FOUND"


async def test_an_amount_finer_than_any_token_is_400(api: httpx.AsyncClient) -> None:
    _, address = await _user_and_address(api)
    response = await api.post(
        "/api/v2/sandbox/crypto/deposits",
        json={
            "Address": address,
            "Currency": "USDC",
            "ChainId": 1,
            "Amount": "0.0000000000000000001",
        },
    )
    assert response.status_code == 400


async def test_an_amount_beyond_any_balance_is_kept_unsupported(
    api: httpx.AsyncClient, anonymous: httpx.AsyncClient, settings: Settings, tenant: Tenant
) -> None:
    user, address = await _user_and_address(api)
    data = {
        "depositId": "rail_dep_huge",
        "txHash": "0x" + "56" * 32,
        "address": address,
        "chainId": 1,
        "token": "USDC",
        "amount": "9" * 30,
        "confirmations": 70,
        "status": "SEEN",
    }
    response = await anonymous.post(
        "/providers/crypto/callbacks", **_report(settings, tenant, "crypto_evt_huge", **data)
    )
    assert response.status_code == 200, response.text
    [deposit] = (await api.get(DEPOSITS, params={"userId": user["Id"]})).json()["Items"]
    assert deposit["Status"] == "UNSUPPORTED"
    assert (await crypto_balance(api, user["Id"]))["Posted"] == 0
