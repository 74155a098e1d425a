"""Card top-ups in batches: many requests' top-ups reserved, loaded and posted together.

The rule is the one `funding.topup` implements for one request, and the rows written are the
same: a pending ledger transfer (master -Value, card +load, fee revenue +fee) and a `PENDING`
funding committed with the idempotency key's recovery point before the provider is called,
the provider's load under the key derived from the request's key, then the posting, the
completed funding and the key's stored response in one commit. What changes is the count of
statements: a batch takes four round trips to the database and one provider call
(`BulkCardLoads.load_many`), however many top-ups it holds, and the company's master account
row is updated once per batch instead of once per top-up.

A top-up is batched only in the plain case: PostgreSQL, an `Idempotency-Key` not used before,
a card of the company that accepts money, no decline fee owed, a provider with bulk loads and
a master shard covering it. Any other request, and any top-up a step leaves out (its key taken
meanwhile, its card changed, the provider not loading it in bulk, a failure), is handed back
to the request's own path (`funding.topup` through the HTTP route), after the batch gave up
its leases: that path resumes from the key's recovery point, so a top-up is never made twice
and never left half done.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import enum
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

import asyncpg
import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from starlette.datastructures import State

from finplat.cards.discounts.service import Discount
from finplat.cards.funding import fees
from finplat.cards.funding import service as funding
from finplat.cards.funding.batches import repository
from finplat.cards.funding.schemas import TopupResponse
from finplat.cards.status import CardStatus
from finplat.config import Settings
from finplat.db import prepared
from finplat.http.observability import error_frames
from finplat.idempotency.service import derived_key
from finplat.kit.clock import utcnow
from finplat.kit.money import exact_json_numbers, from_minor
from finplat.kit.random_tokens import hex_tokens
from finplat.providers.cards.port import BulkCardLoads, CardMovement, LoadOrder
from finplat.providers.registry import Providers

log = structlog.get_logger("finplat.cards.funding.batches.service")
MESSAGE = "Top-up completed."


@dataclass(frozen=True, slots=True)
class TopupOrder:
    """A top-up request the HTTP edge found well formed and authenticated."""

    company_id: int
    api_key_id: int
    card_id: int
    amount_minor: int  # USD cents, 5.00 through 250000.00
    idempotency_key: str
    fingerprint: str  # of the request, as `idempotency.fingerprint` makes it


class HandedBack(enum.Enum):
    """Why `TopupBatches.submit` gives a request back to its own path: nothing was written
    for it, or its key already holds a reservation the route resumes from."""

    UNTOUCHED = "untouched"
    RESERVED = "reserved"


@dataclass(slots=True)
class _Waiting:
    order: TopupOrder
    answer: asyncio.Future[bytes | HandedBack]
    reservation: repository.Reservation | None = field(default=None)
    reserved: repository.Reserved | None = None  # its funding and transfer, once reserved
    provider: str = ""  # the card's provider and its id there, once read
    card_ref: str = ""
    body: bytes | None = None  # the response, once the top-up is posted

    def settle(self) -> None:
        if self.answer.done():
            return
        if self.body is not None:
            self.answer.set_result(self.body)
        elif self.reserved is not None:
            self.answer.set_result(HandedBack.RESERVED)
        else:
            self.answer.set_result(HandedBack.UNTOUCHED)


@dataclass
class TopupBatchStats:
    """What the batches did since the process started (for operators and tests)."""

    batches: int = 0
    served: int = 0  # top-ups answered by a batch
    handed_back: int = 0  # top-ups sent on to the route


class TopupBatches:
    """Gathers top-up orders and runs them in batches, at most `runners` at a time.

    A runner starts when an order arrives and no more than `runners - 1` are running, takes up
    to `batch_size` orders (one per card and per idempotency key), runs them, and stops once
    nothing waits. The application's providers, session factory and settings are read from
    `state` at each batch, so the orders always meet the application's current ones.
    """

    def __init__(
        self, state: State, *, batch_size: int, runners: int, linger_seconds: float = 0.0
    ) -> None:
        self._state = state
        self._batch_size = batch_size
        self._runners = runners
        self._linger = linger_seconds
        self._waiting: deque[_Waiting] = deque()
        self._filled = asyncio.Event()  # a full batch waits
        self._active = 0  # runners started and not yet stopped
        self._busy = 0  # runners running a batch
        self._last_size = 0  # orders the last batch took
        self._tasks: set[asyncio.Task[None]] = set()  # (the loop keeps only weak references)
        self.stats = TopupBatchStats()

    async def submit(self, order: TopupOrder) -> bytes | HandedBack:
        """The top-up's response body, or why the request goes to its own path."""
        waiting = _Waiting(order, asyncio.get_running_loop().create_future())
        self._waiting.append(waiting)
        if len(self._waiting) >= self._batch_size:
            self._filled.set()
        if self._active < self._runners:
            self._active += 1
            # A runner serves many requests: it takes none of this request's context (its log
            # fields, its open session), or a later check would blame it for the request.
            task = asyncio.create_task(self._run_while_waiting(), context=contextvars.Context())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return await waiting.answer

    async def _run_while_waiting(self) -> None:
        """Run batches on one connection while orders wait. A batch's requests get their
        answers once its database work is over (each request's own path may then use the
        same connection: a test's, which every session shares). The runner stops only when
        nothing waits once its session is closed, with no pause in between, so an order never
        waits for a runner that is about to stop."""
        try:
            while True:
                try:
                    await self._run_on_one_connection()
                except Exception as exc:  # no connection: the requests go their own way
                    log.error(
                        "topup_batches_stopped",
                        error_type=type(exc).__name__,
                        frames=error_frames(exc),
                    )
                    self._hand_back_waiting()
                if not self._waiting:
                    return
        finally:
            self._active -= 1

    def _hand_back_waiting(self) -> None:
        while self._waiting:
            waiting = self._waiting.popleft()
            self.stats.handed_back += 1
            waiting.settle()

    async def _run_on_one_connection(self) -> None:
        factory: async_sessionmaker[AsyncSession] = self._state.session_factory
        async with prepared.connection(factory) as pg:
            while self._waiting:
                await self._linger_for_a_full_batch()
                batch = self._take()
                if not batch:  # another runner took them while this one lingered
                    continue
                self._last_size = len(batch)
                self._busy += 1
                try:
                    await _Batch(pg, self._state.providers, self._state.settings, batch).run()
                except Exception as exc:  # keep serving: the requests go their own way
                    log.error(
                        "topup_batch_failed",
                        error_type=type(exc).__name__,
                        frames=error_frames(exc),
                    )
                finally:
                    self._busy -= 1
                    self._settle(batch)

    async def _linger_for_a_full_batch(self) -> None:
        """Wait a moment for a full batch while another batch runs, or while fewer orders wait
        than half the last batch held: the requests a batch's answers release come back one
        by one, and a runner that took the first of them alone would pay a batch's fixed work
        for a handful of top-ups. Otherwise (a quiet moment) go at once."""
        waiting = len(self._waiting)
        if not self._linger or waiting >= self._batch_size:
            return
        if self._busy or 2 * waiting < self._last_size:
            self._filled.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._filled.wait(), self._linger)

    def _settle(self, batch: list[_Waiting]) -> None:
        served = sum(1 for waiting in batch if waiting.body is not None)
        self.stats.batches += 1
        self.stats.served += served
        self.stats.handed_back += len(batch) - served
        for waiting in batch:
            waiting.settle()

    def _take(self) -> list[_Waiting]:
        """The next orders, oldest first, at most one per card and per idempotency key (a
        second one waits for the next batch, which sees what the first did)."""
        batch: list[_Waiting] = []
        cards: set[int] = set()
        keys: set[tuple[int, str]] = set()
        later: list[_Waiting] = []
        while self._waiting and len(batch) < self._batch_size:
            waiting = self._waiting.popleft()
            order = waiting.order
            key = (order.company_id, order.idempotency_key)
            if order.card_id in cards or key in keys:
                later.append(waiting)
                continue
            cards.add(order.card_id)
            keys.add(key)
            batch.append(waiting)
        self._waiting.extendleft(reversed(later))
        return batch


class _Batch:
    def __init__(
        self,
        pg: asyncpg.Connection,
        providers: Providers,
        settings: Settings,
        batch: list[_Waiting],
    ) -> None:
        self.pg = pg
        self.providers = providers
        self.settings = settings
        self.batch = batch
        self.now = utcnow()
        self.bulk: dict[str, bool] = {}  # providers that load in bulk (`BulkCardLoads`)

    async def run(self) -> None:
        reserved = await self._plan_and_reserve()
        if not reserved:
            return
        try:
            loaded = await self._load(reserved)
            if loaded:
                await self._post(loaded)
        finally:
            unanswered = [w for w in reserved if w.body is None]
            if unanswered:
                # Their requests resume from the key's recovery point on their own path.
                await repository.release(
                    self.pg, [(_reservation(w), _reserved(w)) for w in unanswered]
                )

    async def _plan_and_reserve(self) -> list[_Waiting]:
        """Plan and reserve; once more from a fresh read if a card changed in between."""
        for last_try in (False, True):
            planned = await self._plan()
            if not planned:
                return []
            try:
                return await self._reserve(planned)
            except repository.CardChanged:
                if last_try:
                    return []
        return []

    # --------------------------------------------------------------------------- planning

    async def _plan(self) -> list[_Waiting]:
        """Read every card, keep the top-ups the batch can make, and work out their fees,
        legs and shards; hand the others back at once."""
        asked = [
            repository.Asked(w.order.card_id, w.order.company_id, w.order.api_key_id)
            for w in self.batch
        ]
        rows = await repository.read(self.pg, asked, currency=funding.TOPUP_CURRENCY)
        shards: dict[int, _MasterShards] = {}
        planned: list[_Waiting] = []
        for waiting in self.batch:
            waiting.reservation = waiting.reserved = None
        tokens = hex_tokens(len(rows), 16)  # the keys' lease tokens
        for row, token in zip(rows, tokens, strict=True):
            waiting = self.batch[row["ord"]]
            reservation = self._reservation_of(waiting.order, row, shards, token)
            if reservation is not None:
                waiting.reservation = reservation
                waiting.provider = row["provider"]
                waiting.card_ref = row["provider_card_id"]
                planned.append(waiting)
        return planned

    def _reservation_of(
        self,
        order: TopupOrder,
        row: asyncpg.Record,
        shards: dict[int, _MasterShards],
        lease_token: str,
    ) -> repository.Reservation | None:
        if not row["key_valid"]:
            return None
        if (
            row["status"] == CardStatus.CANCELLED
            or row["currency"] != funding.TOPUP_CURRENCY
            or row["outstanding_fee_minor"]
            or row["provider_card_id"] is None
            or row["ledger_account_id"] is None
            or row["master_id"] is None
            or row["revenue_id"] is None
            or not self._loads_in_bulk(row["provider"])
        ):
            return None
        fee = _topup_fee(row, order.amount_minor)
        if order.amount_minor - fee <= 0:
            return None
        master = shards.get(order.company_id)
        if master is None:
            master = shards[order.company_id] = _MasterShards(list(row["available"] or []))
        shard = master.take(order.amount_minor)
        if shard is None:
            return None  # no shard covers it alone: the request's own path spreads it
        provider_key = derived_key(order.company_id, order.idempotency_key, funding.LOAD_STEP)
        return repository.Reservation(
            card_id=order.card_id,
            company_id=order.company_id,
            amount_minor=order.amount_minor,
            fee_minor=fee,
            provider_key=provider_key,
            # As the ledger stores a transfer's details (`funding._reserve_topup`).
            details=f'{{"cardId": {order.card_id}, "fee": {fee}, "declineFeePaid": 0}}',
            master_account_id=int(row["master_id"]),
            master_shard=shard,
            card_account_id=int(row["ledger_account_id"]),
            revenue_account_id=int(row["revenue_id"]),
            revenue_shard=master.revenue_shard,
            idempotency_key=order.idempotency_key,
            fingerprint=order.fingerprint,
            lease_token=lease_token,
        )

    def _loads_in_bulk(self, provider: str) -> bool:
        known = self.bulk.get(provider)
        if known is None:
            program = self.providers.card_programs.get(provider)
            known = self.bulk[provider] = isinstance(program, BulkCardLoads)
        return known

    # --------------------------------------------------------------------------- the steps

    async def _reserve(self, planned: list[_Waiting]) -> list[_Waiting]:
        self.now = utcnow()
        policy = self.providers.policy
        try:
            reserved = await repository.reserve(
                self.pg,
                [_reservation(w) for w in planned],
                currency=funding.TOPUP_CURRENCY,
                recovery_point=funding.RESERVED,
                now=self.now,
                key_lease_until=self.now
                + timedelta(seconds=self.settings.idempotency_lease_seconds),
                provider_call_until=self.now + timedelta(seconds=2 * policy.longest_call_seconds),
            )
        except asyncpg.CheckViolationError:
            return []  # a master account short of the batch: each request answers for itself
        for ids in reserved:
            planned[ids.index].reserved = ids
        return [w for w in planned if w.reserved is not None]

    async def _load(self, reserved: list[_Waiting]) -> list[tuple[_Waiting, CardMovement]]:
        """One bulk call per provider, cut at the provider timeout; a failure or a timeout
        leaves every top-up of the call to its own path (which asks by key first)."""
        by_provider: dict[str, list[_Waiting]] = {}
        for waiting in reserved:
            by_provider.setdefault(waiting.provider, []).append(waiting)
        calls = [self._load_at(name, group) for name, group in by_provider.items()]
        results = await asyncio.gather(*calls, return_exceptions=True)
        loaded: list[tuple[_Waiting, CardMovement]] = []
        for group_result in results:
            if isinstance(group_result, BaseException):
                log.warning("topup_batch_load_failed", error_type=type(group_result).__name__)
                continue
            loaded += group_result
        return loaded

    async def _load_at(
        self, name: str, group: list[_Waiting]
    ) -> list[tuple[_Waiting, CardMovement]]:
        program = self.providers.card_programs[name]
        assert isinstance(program, BulkCardLoads)
        orders = [
            LoadOrder(
                company_id=w.order.company_id,
                card_id=w.card_ref,
                idempotency_key=_reservation(w).provider_key,
                amount_minor=_reservation(w).amount_minor - _reservation(w).fee_minor,
            )
            for w in group
        ]
        made = await asyncio.wait_for(
            program.load_many(orders), timeout=self.providers.policy.timeout_seconds
        )
        return [(w, m) for w, m in zip(group, made, strict=True) if m is not None]

    async def _post(self, loaded: list[tuple[_Waiting, CardMovement]]) -> None:
        items = [
            repository.Loaded(
                _reservation(w),
                _reserved(w),
                movement.movement_id,
                movement.balance_minor,
                self._body(w),
            )
            for w, movement in loaded
        ]
        posted = await repository.post(self.pg, items, now=utcnow())
        for item, (waiting, _) in zip(items, loaded, strict=True):
            if item.reserved.funding_id in posted:
                waiting.body = item.body

    def _body(self, waiting: _Waiting) -> bytes:
        reservation = _reservation(waiting)
        return written_answer(
            _reserved(waiting).funding_id,
            reservation.amount_minor,
            reservation.fee_minor,
            self.now,
        )


def written_answer(
    funding_id: int, amount_minor: int, fee_minor: int, created_at: datetime
) -> bytes:
    """The response the route renders for a top-up (`cards_topup`), byte for byte: `render`
    of its `TopupResponse`, written out directly (a property test holds the two equal)."""
    # A UTC instant as Pydantic writes one: microseconds only when there are any.
    instant = created_at.isoformat().replace("+00:00", "Z")
    return (
        f'{{"Success":true,"OrderId":{funding_id},"Token":"USD",'
        f'"Value":{_usd(amount_minor)},"Fee":{_usd(fee_minor)},'
        f'"Message":"{MESSAGE}","CreatedAt":"{instant}"}}'
    ).encode()


def _usd(minor: int) -> str:
    return format(from_minor(minor, funding.TOPUP_CURRENCY), "f")


def render(response: TopupResponse) -> bytes:
    """The JSON the route sends for `response`: FastAPI serializes a response model with its
    Pydantic serializer, and the route class turns the amounts into exact numbers."""
    return exact_json_numbers(response.model_dump_json(by_alias=True).encode())


def _reservation(waiting: _Waiting) -> repository.Reservation:
    assert waiting.reservation is not None
    return waiting.reservation


def _reserved(waiting: _Waiting) -> repository.Reserved:
    assert waiting.reserved is not None
    return waiting.reserved


def _topup_fee(row: asyncpg.Record, amount_minor: int) -> int:
    """The card's tier's top-up fee after the card's discount code, as the request's own path
    charges it (`fees.FeeSchedule.topup_fee`, then `discounts.Discount.applied_to`)."""
    if row["topup_fee_percent"] is None:  # no schedule for the tier
        fee = fees.DEFAULT_SCHEDULE.topup_fee(amount_minor)
    else:
        fee = fees.fee_of(
            amount_minor, Decimal(row["topup_fee_percent"]), int(row["topup_fixed_fee_minor"])
        )
    if row["discount_percent_off"] is None:
        return fee
    discount = Discount(
        Decimal(row["discount_percent_off"]),
        row["discount_valid_from"],
        row["discount_valid_until"],
    )
    return discount.applied_to(fee)


class _MasterShards:
    """Where the batch takes a company's money from: a shard whose available balance (read
    without a lock) covers the top-up, at random among those; the shard's CHECK constraint is
    the guard. The fee revenue shard is one at random per batch."""

    def __init__(self, available: Sequence[int]) -> None:
        self.available = list(available)
        self.revenue_shard = random.randrange(max(1, len(self.available)))  # noqa: S311

    def take(self, amount_minor: int) -> int | None:
        covering = [s for s, held in enumerate(self.available) if held >= amount_minor]
        if not covering:
            return None
        shard = random.choice(covering)  # noqa: S311 - load spreading only
        self.available[shard] -= amount_minor
        return shard


__all__ = ["HandedBack", "TopupBatchStats", "TopupBatches", "TopupOrder", "render"]
