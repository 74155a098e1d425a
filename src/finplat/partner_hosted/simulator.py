"""`finplat partner-sim`: a reference partner for partner-hosted balances, a real HTTP server
holding its users' balances in memory, for tests and local use.

It serves the six partner endpoints as finplat calls them, refuses a request without the
right `X-API-Key` (401) or `X-Service-Signature` (HMAC-SHA256 of the body with the company's
webhook secret; 401), and applies each notification once per `IdempotencyId` (a repeat is
answered as the first was and counted in `duplicates`). Purchases are keyed by
`CardTransactionId`: an authorization holds the amount (`Available` = ledger - holds), a
reversal releases it (one that arrives before its authorization makes that authorization
decline), a clearing posts it, a refund credits it, an adjustment sets a stand-in hold
(`STAND_IN_APPROVAL`), adds to one (`INCREMENTAL`) or moves the ledger (any other reason).
`delay_ms` answers every request that much later (an authorization is decided first, so a
late answer is a late approval); `fail_rate` answers that share of requests 503, unapplied.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from finplat.kit.signing import verify_service_signature
from finplat.partner_hosted import client


@dataclass
class ReferencePartner:
    api_key: str
    webhook_secret: str
    currency: str = "USD"
    default_balance: Decimal = Decimal("1000")
    delay_ms: int = 0
    fail_rate: float = 0.0
    ledger: dict[str, Decimal] = field(default_factory=dict)
    holds: dict[str, tuple[str, Decimal]] = field(default_factory=dict)
    reversed_early: set[str] = field(default_factory=set)
    decisions: dict[str, dict[str, Any]] = field(default_factory=dict)
    applied: dict[str, dict[str, Any]] = field(default_factory=dict)
    received: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0

    # ------------------------------------------------------------------ balances

    def balance(self, user: str) -> Decimal:
        return self.ledger.setdefault(user, self.default_balance)

    def available(self, user: str) -> Decimal:
        held = sum((amount for who, amount in self.holds.values() if who == user), Decimal(0))
        return self.balance(user) - held

    def held(self, purchase: str) -> Decimal:
        return self.holds.get(purchase, ("", Decimal(0)))[1]

    # ------------------------------------------------------------------ operations

    def authorize(self, body: dict[str, Any]) -> dict[str, Any]:
        purchase, user, amount = _purchase(body)
        if purchase in self.decisions:
            return self.decisions[purchase]
        if purchase in self.reversed_early:
            answer: dict[str, Any] = {"Approved": False, "DeclineReason": "REVERSED"}
        else:
            available = self.available(user)
            if available >= amount:
                taken = amount
            elif body.get("PartialApproval") is True and available > 0:
                taken = available
            else:
                taken = Decimal(0)
            if taken > 0:
                self.holds[purchase] = (user, taken)
                answer = {"Approved": True, "ApprovedAmount": taken}
            else:
                answer = {"Approved": False, "DeclineReason": "INSUFFICIENT_FUNDS"}
        self.decisions[purchase] = answer
        return answer

    def notify(self, operation: str, body: dict[str, Any]) -> dict[str, Any]:
        purchase, user, amount = _purchase(body)
        held = self.held(purchase)
        if operation == "reversals":
            if purchase not in self.holds:
                self.reversed_early.add(purchase)
            self._hold(purchase, user, held - min(amount, held))
        elif operation == "clearings":
            self._hold(purchase, user, Decimal(0))
            self.ledger[user] = self.balance(user) - amount
        elif operation == "refunds":
            self.ledger[user] = self.balance(user) + amount
        elif body.get("Reason") == "STAND_IN_APPROVAL":
            if purchase not in self.reversed_early:
                self._hold(purchase, user, amount)
        elif body.get("Reason") == "INCREMENTAL":
            self._hold(purchase, user, held + amount)
        else:
            self.ledger[user] = self.balance(user) + amount
        return {"Applied": True, "Available": self.available(user)}

    def _hold(self, purchase: str, user: str, amount: Decimal) -> None:
        if amount > 0:
            self.holds[purchase] = (user, amount)
        else:
            self.holds.pop(purchase, None)

    # ------------------------------------------------------------------ HTTP

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/balances/{user}", self._balances, methods=["GET"]),
                Route("/authorizations", self._authorizations, methods=["POST"]),
                Route("/{operation:str}", self._notification, methods=["POST"]),
            ]
        )

    async def _admit(self, request: Request) -> tuple[bytes, Response | None]:
        body = await request.body()
        self.received[request.url.path.split("/")[1]] += 1
        if request.headers.get(client.API_KEY_HEADER) != self.api_key:
            return body, _error(401, "UNAUTHORIZED")
        signature = request.headers.get(client.SIGNATURE_HEADER, "")
        if not verify_service_signature(self.webhook_secret, body, signature):
            return body, _error(401, "BAD_SIGNATURE")
        if self.fail_rate and random.random() < self.fail_rate:  # noqa: S311 - a simulation
            return body, _error(503, "PARTNER_DOWN")
        return body, None

    async def _answer(self, payload: dict[str, Any], status: int = 200) -> Response:
        if self.delay_ms:
            await asyncio.sleep(self.delay_ms / 1000)
        return Response(client.render(payload), status_code=status, media_type="application/json")

    async def _balances(self, request: Request) -> Response:
        _body, refused = await self._admit(request)
        if refused is not None:
            return refused
        user = request.path_params["user"]
        return await self._answer(
            {
                "Balances": [
                    {
                        "Currency": self.currency,
                        "Available": self.available(user),
                        "Ledger": self.balance(user),
                    }
                ]
            }
        )

    async def _authorizations(self, request: Request) -> Response:
        raw, refused = await self._admit(request)
        if refused is not None:
            return refused
        body = _json(raw)
        if body is None:
            return _error(400, "BAD_REQUEST")
        return await self._answer(self.authorize(body))

    async def _notification(self, request: Request) -> Response:
        operation = request.path_params["operation"]
        if operation not in ("reversals", "clearings", "refunds", "adjustments"):
            return _error(404, "NOT_FOUND")
        raw, refused = await self._admit(request)
        if refused is not None:
            return refused
        body = _json(raw)
        key = None if body is None else body.get("IdempotencyId")
        if body is None or not isinstance(key, str):
            return _error(400, "BAD_REQUEST")
        if key in self.applied:
            self.duplicates += 1
            return await self._answer(self.applied[key])
        self.applied[key] = self.notify(operation, body)
        return await self._answer(self.applied[key])


def _purchase(body: dict[str, Any]) -> tuple[str, str, Decimal]:
    amount = client.decimal_of(body.get("Amount")) or Decimal(0)
    return str(body.get("CardTransactionId")), str(body.get("ExternalUserId")), amount


def _json(raw: bytes) -> dict[str, Any] | None:
    try:
        parsed = json.loads(raw, parse_float=Decimal)
    except (ValueError, UnicodeDecodeError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _error(status: int, code: str) -> Response:
    return JSONResponse({"Code": code}, status_code=status)


async def serve(
    partner: ReferencePartner, *, host: str, port: int, stop_after: float | None
) -> None:
    """Serve until stopped (Ctrl-C), or for `stop_after` seconds."""
    server = uvicorn.Server(
        uvicorn.Config(partner.app(), host=host, port=port, log_level="warning", lifespan="off")
    )
    task = asyncio.create_task(server.serve())
    if stop_after is not None:
        done, _ = await asyncio.wait({task}, timeout=stop_after)
        if not done:
            server.should_exit = True
    await task
