"""Steps of the onboarding flow over HTTP, shared by the KYC, banking and business tests."""

from __future__ import annotations

from typing import Any

import httpx

from tests.factories import user_payload


async def create_user(api: httpx.AsyncClient, **overrides: Any) -> dict[str, Any]:
    response = await api.post("/api/v2/users", json=user_payload(**overrides))
    assert response.status_code == 201, response.text
    return dict(response.json())


async def start_kyc(api: httpx.AsyncClient, user_id: int, **body: Any) -> dict[str, Any]:
    response = await api.post(f"/api/v2/users/{user_id}/sumsub/kyc-url", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def decide(
    api: httpx.AsyncClient, user_id: int, outcome: str, provider: str | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {"Outcome": outcome}
    if provider is not None:
        body["Provider"] = provider
    response = await api.post(f"/api/v2/sandbox/users/{user_id}/kyc/complete", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def approved_user(api: httpx.AsyncClient, **overrides: Any) -> dict[str, Any]:
    """A user whose base identity verification is approved, through the sandbox."""
    user = await create_user(api, **overrides)
    await start_kyc(api, user["Id"])
    await decide(api, user["Id"], "APPROVED")
    return user


async def select_tier(api: httpx.AsyncClient, user_id: int, tier_name: str) -> None:
    tiers = (await api.get("/api/v2/tiers")).json()["Tiers"]
    tier_id = next(t["Id"] for t in tiers if t["Name"] == tier_name)
    response = await api.post(f"/api/v2/users/{user_id}/tier", json={"TierId": tier_id})
    assert response.status_code == 200, response.text


def provider_status(report: dict[str, Any], provider: str) -> dict[str, Any]:
    return next(p for p in report["Providers"] if p["Provider"] == provider)


async def set_fault(
    api: httpx.AsyncClient, provider: str, operation: str, mode: str, count: int = 1, **extra: Any
) -> None:
    body = {"Provider": provider, "Operation": operation, "Mode": mode, "Count": count, **extra}
    response = await api.put("/api/v2/sandbox/faults", json=body)
    assert response.status_code == 200, response.text
