"""Pay-in addresses: the spec's pairs only, one stable address per user, currency and chain,
in the chain's own format, from the crypto rail."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from finplat.providers.crypto import addresses
from finplat.providers.crypto.port import Chain
from tests.crypto.steps import PAIRS, payin_address
from tests.onboarding import approved_user, create_user

PATH = "/api/v2/crypto-virtual-accounts/payin-address"


@pytest.mark.parametrize(("currency", "chain_id"), PAIRS)
async def test_every_supported_pair_gets_an_address_valid_for_its_chain(
    api: httpx.AsyncClient, currency: str, chain_id: int
) -> None:
    user = await approved_user(api)
    answer = await payin_address(api, user["Id"], currency, chain_id)
    assert answer["CryptoCurrency"] == currency
    assert answer["ChainId"] == chain_id
    assert answer["UserId"] == user["Id"]
    assert addresses.is_valid(Chain(chain_id), answer["Address"])
    if chain_id == -200:
        assert answer["Address"].startswith("T")
        assert answer["Network"] == "TRON"
    else:
        # EIP-55: the checksummed spelling, which is mixed case for almost every account.
        account = bytes.fromhex(answer["Address"][2:])
        assert answer["Address"] == addresses.eip55(account)


@pytest.mark.parametrize(
    "body",
    [
        {"crypto_currency": "DAI", "chain_id": 1},
        {"crypto_currency": "usdc", "chain_id": 1},
        {"crypto_currency": "USDC", "chain_id": 56},
        {"crypto_currency": "USDT", "chain_id": 200},
        {"crypto_currency": "USDC", "chain_id": "1"},
        {"crypto_currency": "USDC", "chain_id": True},
        {"crypto_currency": "USDC"},
        {"chain_id": 137},
        {},
        {"crypto_currency": "USDC", "chain_id": 1, "Memo": "x"},
    ],
)
async def test_another_currency_or_chain_is_400_with_the_standard_body(
    api: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    user = await approved_user(api)
    response = await api.post(PATH, params={"userId": user["Id"]}, json=body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["Code"] == "VALIDATION_ERROR"
    assert error["Status"] == 400
    assert error["ValidationErrors"]


async def test_a_missing_field_is_named_in_the_error(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)
    response = await api.post(PATH, params={"userId": user["Id"]}, json={"chain_id": 1})
    assert response.status_code == 400
    assert "crypto_currency" in response.json()["ValidationErrors"]


async def test_a_repeat_returns_the_same_address(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)
    first = await payin_address(api, user["Id"], "USDT", -200)
    again = await payin_address(api, user["Id"], "USDT", -200)
    assert again == first


async def test_field_names_bind_case_insensitively(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)
    first = await payin_address(api, user["Id"], "USDC", 137)
    response = await api.post(
        PATH, params={"userId": user["Id"]}, json={"Crypto_Currency": "USDC", "CHAIN_ID": 137}
    )
    assert response.status_code == 200
    assert response.json()["Address"] == first["Address"]


async def test_each_pair_and_each_user_has_its_own_address(api: httpx.AsyncClient) -> None:
    ada = await approved_user(api)
    bob = await approved_user(api)
    seen = {(await payin_address(api, ada["Id"], c, n))["Address"] for c, n in PAIRS}
    assert len(seen) == len(PAIRS)
    assert (await payin_address(api, bob["Id"]))["Address"] not in seen


async def test_the_list_shows_every_issued_address(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)
    usdc = await payin_address(api, user["Id"], "USDC", 1)
    usdt = await payin_address(api, user["Id"], "USDT", -200)
    response = await api.get(
        "/api/v2/crypto-virtual-accounts/payin-addresses", params={"userId": user["Id"]}
    )
    assert response.status_code == 200
    assert response.json()["Addresses"] == [usdc, usdt]


async def test_an_unverified_user_gets_no_address(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await api.post(
        PATH, params={"userId": user["Id"]}, json={"crypto_currency": "USDC", "chain_id": 1}
    )
    assert response.status_code == 409
    assert response.json()["Code"] == "KYC_NOT_APPROVED"


async def test_user_id_is_required(api: httpx.AsyncClient) -> None:
    response = await api.post(PATH, json={"crypto_currency": "USDC", "chain_id": 1})
    assert response.status_code == 400


async def test_an_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    response = await api.post(
        PATH, params={"userId": 999999}, json={"crypto_currency": "USDC", "chain_id": 1}
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "USER_NOT_FOUND"
