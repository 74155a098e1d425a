"""Steps of partner-hosted balances over HTTP, against the reference partner
(`finplat partner-sim`'s app) served on a loopback port in the test's event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select, update

from finplat.kit.clock import utcnow
from finplat.partner_hosted.models import PartnerDelivery
from finplat.partner_hosted.outbox import PartnerDeliveryWorker
from finplat.partner_hosted.simulator import ReferencePartner
from tests.local_server import LocalServer
from tests.sensitive_data import SCANNER

PARTNER_KEY = "pk_test_partner_0001"  # a test double's key, not a secret


async def webhook_secret(api: httpx.AsyncClient) -> str:
    response = await api.put("/api/v2/company/configuration", json={"RotateWebhookSecret": True})
    assert response.status_code == 200, response.text
    return str(response.json()["WebhookSecret"])


async def configure(
    api: httpx.AsyncClient,
    base_url: str,
    *,
    timeout_ms: int = 1000,
    fallback: str = "DECLINE",
    api_key: str | None = PARTNER_KEY,
) -> httpx.Response:
    hosted: dict[str, Any] = {
        "BaseUrl": base_url,
        "TimeoutMs": timeout_ms,
        "FallbackDecision": fallback,
    }
    if api_key is not None:
        hosted["ApiKey"] = SCANNER.watch_key(api_key)  # never to be seen again
    return await api.put("/api/v2/company/configuration", json={"PartnerHosted": hosted})


@asynccontextmanager
async def partner_hosted(
    api: httpx.AsyncClient, *, timeout_ms: int = 1000, fallback: str = "DECLINE"
) -> AsyncIterator[tuple[ReferencePartner, LocalServer]]:
    """A running reference partner, configured as the company's `PartnerHosted`."""
    partner = ReferencePartner(api_key=PARTNER_KEY, webhook_secret=await webhook_secret(api))
    async with LocalServer(partner.app()) as server:
        configured = await configure(
            api, f"http://localhost:{server.port}", timeout_ms=timeout_ms, fallback=fallback
        )
        assert configured.status_code == 200, configured.text
        yield partner, server


async def authorize(
    api: httpx.AsyncClient, card: dict[str, Any], amount: float | str, **extra: Any
) -> dict[str, Any]:
    response = await api.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": card["UserId"]},
        json={"Amount": amount, "Currency": "USD", "Merchant": "Coffee Shop", **extra},
    )
    assert response.status_code == 200, response.text
    return dict(response.json())


async def deliver(app: FastAPI) -> int:
    """The partner outbox worker until nothing is due; how many attempts it made. One
    delivery a batch: the test's sessions share one connection, which cannot serve parallel
    transactions (the worker's own parallelism runs in tests/partner_hosted/test_worker.py)."""
    worker = PartnerDeliveryWorker(
        app.state.session_factory, allow_loopback=True, timeout=5.0, batch_size=1
    )
    sent = 0
    while await worker.run_once():
        sent += 1
    return sent


async def deliveries(app: FastAPI) -> list[PartnerDelivery]:
    async with app.state.session_factory() as session:
        stmt = select(PartnerDelivery).order_by(PartnerDelivery.created_at)
        return list((await session.execute(stmt)).scalars())


async def send_again(app: FastAPI) -> None:
    """Every delivery due again, as after a lost acknowledgement."""
    async with app.state.session_factory() as session:
        await session.execute(
            update(PartnerDelivery).values(status="retrying", next_attempt_at=utcnow())
        )
        await session.commit()


def available(partner: ReferencePartner, user: str) -> Decimal:
    return partner.available(user)
