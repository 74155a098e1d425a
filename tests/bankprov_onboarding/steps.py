"""Steps of the banking-provider personal onboarding over HTTP."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx

from finplat.kit.clock import today
from tests.callbacks import signed
from tests.documents import samples
from tests.isolated import Isolated
from tests.onboarding import approved_user, provider_status, select_tier

Files = list[tuple[str, tuple[str, bytes, str]]]


def onboarding_fields(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "RequestedFeatures": ["PAYMENTS", "CARDS"],
        "MainPurpose": "Everyday spending and saving",
        "SourceOfFunds": "Salary",
        "DestinationOfFunds": "GB",
        "CurrenciesRequired": "EUR,GBP",
        "AnnualVolume": "10000-50000",
        "NumberOfPayments": "10-50",
        "CardPurposes": "Travel",
        "AtmWithdrawalsRequired": "true",
        "NumberOfCardsRequired": "1",
        "CardAnnualSpend": "5000+",
        "ProofOfAddressDate": (today() - timedelta(days=10)).isoformat(),
    }
    fields.update(overrides)
    return {k: v for k, v in fields.items() if v is not ...}


def proof(data: bytes | None = None, name: str = "statement.pdf") -> Files:
    return [("ProofOfAddress", (name, samples.pdf() if data is None else data, "application/pdf"))]


async def submit(
    api: httpx.AsyncClient, user_id: int, *, files: Files | None = None, **fields: Any
) -> httpx.Response:
    return await api.post(
        "/api/v2/banking/bankprov-onboarding",
        params={"userId": user_id},
        data=onboarding_fields(**fields),
        files=proof() if files is None else files,
    )


async def eligible_user(api: httpx.AsyncClient) -> dict[str, Any]:
    """A personal user on a tier with the banking provider, base KYC approved."""
    user = await approved_user(api)
    await select_tier(api, user["Id"], "Personal Premium")
    return user


async def onboarded_user(api: httpx.AsyncClient) -> dict[str, Any]:
    user = await eligible_user(api)
    response = await submit(api, user["Id"])
    assert response.status_code == 202, response.text
    return {**user, "AccountId": response.json()["AccountId"]}


def documents(*contents: bytes, field: str = "Files") -> Files:
    return [
        (field, (f"doc{i}.bin", data, "application/octet-stream"))
        for i, data in enumerate(contents)
    ]


async def upload(api: httpx.AsyncClient, user_id: int, files: Files) -> httpx.Response:
    return await api.post(f"/api/v2/users/{user_id}/kyc/bankprov/documents", files=files)


async def bankprov_status(api: httpx.AsyncClient, user_id: int) -> str:
    report = (await api.get("/api/v2/banking/providers", params={"userId": user_id})).json()
    return str(provider_status(report, "bankprov")["Status"])


def account_activated(env: Isolated, account_id: str, event_id: str) -> dict[str, Any]:
    """The banking provider's signed `account.status_changed` callback telling that the
    account is active: the keyword arguments of its POST."""
    return signed(
        env.app.state.settings.provider_callback_secret,
        company_id=env.company_id,
        type_="account.status_changed",
        data={"accountId": account_id, "status": "active"},
        event_id=event_id,
    )


async def provider_activates(env: Isolated, account_id: str, event_id: str) -> None:
    """The banking provider approves the account (acknowledged)."""
    response = await env.client.post(
        "/providers/bankprov/callbacks", **account_activated(env, account_id, event_id)
    )
    assert response.status_code == 200, response.text
