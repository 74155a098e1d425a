"""The HTTP edge of batched card top-ups: `POST /api/v2/cards/topup` without the framework.

A pure ASGI middleware inside the request-id, access-log and request-body middlewares. It
serves a top-up through the batches (`topup_batches`) when the request is one they can take
as it is: a JSON body of exactly `CardId` (a whole number), `Token` `USD` and a `Value` from
5.00 to 250000.00 with at most two decimals, read as the route reads it (`finplat.http.json_body`),
and an API key this process knows to be valid. With an `Idempotency-Key` or without: a keyless
top-up gets a key of its own, under which the route resumes it if a batch hands it back. It
counts the request against the key's rate limit first (a request over it goes to the route,
which answers 429 without counting it again). Every other request, and every top-up a batch
hands back, goes on to the application with its body replayed: the route answers it,
validation errors and all, exactly as before. The answer of a batched top-up is the route's
own answer, byte for byte (`topup_batches.render`).

Only a request that can be served faster is taken here; the route stays the one definition
of the operation (and of the OpenAPI document).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from finplat.auth.key_store import ApiKeyStore
from finplat.cards.funding import service as funding
from finplat.cards.funding.batches.repository import TOPUP_PATH
from finplat.cards.funding.batches.service import HandedBack, TopupBatches, TopupOrder
from finplat.http import json_body
from finplat.http.asgi_response import send_json
from finplat.http.rate_limit import RATE_COUNTED, CountedRequest, RateLimited
from finplat.http.routing import API_KEY_HEADER, served_routes
from finplat.idempotency import service as idempotency
from finplat.kit.money import ExcessPrecision, to_minor
from finplat.kit.schemas import MAX_ID

_FIELDS = frozenset({"CardId", "Token", "Value"})
_MIN = funding.MIN_TOPUP
_MAX = funding.MAX_TOPUP
_HEADERS = {API_KEY_HEADER.encode(), b"idempotency-key", b"content-type"}


class TopupLane:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._route: BaseRoute | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        application = scope.get("app")
        batches: TopupBatches | None = getattr(
            getattr(application, "state", None), "topup_batches", None
        )
        if (
            batches is None
            or scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"] != TOPUP_PATH
        ):
            await self.app(scope, receive, send)
            return
        headers = _single_headers(scope)
        if headers is None or not _is_json(headers.get(b"content-type")):
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:
            return  # the client went away, or the body was refused as too large
        replay = _replaying(body, receive)
        order = await self._order(scope, headers, body)
        if order is None:
            await self.app(scope, replay, send)
            return
        state = scope.setdefault("state", {})
        try:
            await application.state.rate_limiter.check(order.api_key_id)  # type: ignore[union-attr]
        except RateLimited as limited:
            # The route gives this verdict, as it gives its own: before any database work.
            state[RATE_COUNTED] = CountedRequest(order.api_key_id, limited)
            await self.app(scope, replay, send)
            return
        state[RATE_COUNTED] = CountedRequest(order.api_key_id, None)
        answer = await batches.submit(order)
        if isinstance(answer, HandedBack):
            if answer is HandedBack.RESERVED and b"idempotency-key" not in headers:
                # A keyless top-up the batch reserved (and may have loaded) under the key the
                # edge gave it: the route resumes it under that key, so it is never made
                # twice. One it never reserved stays keyless, as the route runs it.
                scope["headers"] = [
                    *scope["headers"],
                    (b"idempotency-key", order.idempotency_key.encode()),
                ]
            await self.app(scope, replay, send)
            return
        # Named in the access log, as the route is.
        state["company_id"] = order.company_id
        scope["route"] = self._topup_route(scope)
        await send_json(send, 200, answer)

    async def _order(
        self, scope: Scope, headers: dict[bytes, bytes], body: bytes
    ) -> TopupOrder | None:
        api_key = headers.get(API_KEY_HEADER.encode(), b"").decode("latin-1").strip()
        sent = headers.get(b"idempotency-key")
        # A keyless top-up runs once, as the route runs it; the batch needs a key to record
        # how far it got, so it gets one no client could send by chance.
        key = idempotency.keyless_key() if sent is None else sent.decode("latin-1")
        if not api_key or idempotency.KEY_PATTERN_RE.match(key) is None:
            return None
        asked = read_body(body)
        if asked is None:
            return None
        # Only a key known valid: any other goes to the route, which throttles failures
        # before it reads the key (`auth.failure_throttle`).
        store: ApiKeyStore = scope["app"].state.api_keys
        principal = store.known(api_key)
        if principal is None:
            return None
        query = scope.get("query_string", b"").decode("latin-1")
        return TopupOrder(
            company_id=principal.company_id,
            api_key_id=principal.api_key_id,
            card_id=asked.card_id,
            amount_minor=asked.amount_minor,
            idempotency_key=key,
            fingerprint=asked.fingerprint(query),
        )

    def _topup_route(self, scope: Scope) -> BaseRoute | None:
        if self._route is None:
            for route in served_routes(scope["app"].routes):
                if getattr(route, "path", None) == TOPUP_PATH and "POST" in getattr(
                    route, "methods", ()
                ):
                    self._route = route
        return self._route


@dataclass(frozen=True, slots=True)
class TopupBody:
    """A top-up body the route would accept as it is."""

    card_id: int
    amount_minor: int
    value: int | float  # `Value` as `json.loads` reads it

    def fingerprint(self, query: str) -> str:
        """The request's fingerprint, as the route makes it from the body's bytes."""
        document = {"CardId": self.card_id, "Token": funding.TOPUP_CURRENCY, "Value": self.value}
        return idempotency.fingerprint_of_json("POST", TOPUP_PATH, query, document)


def read_body(body: bytes) -> TopupBody | None:
    """The top-up in `body` when the route would accept it as it is; None for any other body
    (the route answers it)."""
    try:
        parsed: Any = json_body.DECODER.decode(body.decode())
    except (ValueError, RecursionError):  # the route refuses it: not UTF-8, not JSON, ambiguous
        return None
    if not isinstance(parsed, dict) or parsed.keys() != _FIELDS:
        return None
    card_id, currency, value = parsed["CardId"], parsed["Token"], parsed["Value"]
    if type(card_id) is not int or not 1 <= card_id <= MAX_ID:
        return None
    if currency != funding.TOPUP_CURRENCY:
        return None
    if type(value) is not int and not (isinstance(value, Decimal) and value.is_finite()):
        return None
    amount = Decimal(value)
    if not _MIN <= amount <= _MAX:
        return None
    try:
        cents = to_minor(amount, funding.TOPUP_CURRENCY)
    except ExcessPrecision:
        return None
    # A JSON number with a fraction reads as the float nearest its text, as Decimal -> float.
    return TopupBody(card_id, cents, value if type(value) is int else float(value))


def _single_headers(scope: Scope) -> dict[bytes, bytes] | None:
    """The headers the edge reads, or None when one of them comes twice."""
    found: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        if name in _HEADERS:
            if name in found:
                return None
            found[name] = value
    return found


def _is_json(content_type: bytes | None) -> bool:
    if content_type is None:
        return False
    media_type = content_type.split(b";", 1)[0].strip().lower()
    return media_type == b"application/json"


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replaying(body: bytes, receive: Receive) -> Receive:
    """`receive` for the application: the body already read, then the client's messages."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
