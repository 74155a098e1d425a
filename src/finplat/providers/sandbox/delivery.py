"""Sends the sandbox providers' queued callbacks through the inbound path.

The background job sends them when due (the asynchronous answer a real provider gives);
sandbox endpoints send a company's due callbacks at once so a simulation's effect is visible
in its response.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

import structlog
from sqlalchemy import Row, Table, bindparam, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db import driver_statements
from finplat.db.dialect import for_update
from finplat.db.unit_of_work import unit_of_work
from finplat.events.envelope import timestamp
from finplat.kit.clock import pause, utcnow
from finplat.providers import inbound
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox import emissions
from finplat.providers.sandbox.models import SandboxCallback

log = structlog.get_logger("finplat.providers.sandbox")
_TABLE = cast(Table, SandboxCallback.__table__)
_CALLBACKS = _TABLE.c
BATCH = 50
ROUNDS = 20
RETRY_CAP = timedelta(hours=1)
LEASE = timedelta(seconds=30)
FIRST_WAIT_SECONDS = 0.002
LAST_WAIT_SECONDS = 0.05
WAIT_LIMIT_SECONDS = 10.0


async def deliver_due(
    factory: async_sessionmaker[AsyncSession], *, secret: str, company_id: int | None = None
) -> int:
    """Send every due, unsent callback (of one company, or all, apart from those sandbox
    requests of this process will send themselves), batch after batch, so a backlog never
    hides a new callback behind it (at most `ROUNDS` batches a call); returns how many this
    call applied. Each batch is claimed for `LEASE`, so parallel calls send each
    callback once. A call for one company returns only once the callbacks it must show are
    sent (waiting at most `WAIT_LIMIT_SECONDS` for those another call holds), so that a
    sandbox simulation's effect is visible in its response: in a sandbox request, the
    request's own callbacks and the company's backlog apart from the callbacks
    other requests of this process will send themselves; outside one, every callback of the
    company due when the call started. A callback whose processing fails is tried again after
    a growing delay, so it cannot hold up the ones queued behind it."""
    started = utcnow()
    mine = emissions.own() if company_id is not None else []
    # The background job (every company's) and a sandbox request leave to the requests of
    # this process the callbacks those will send before they answer (each request's own
    # until it ends): the job taking one made its request wait for the job's whole batch.
    in_flight = company_id is None or bool(mine)
    claim = _Claim(
        token=uuid.uuid4().hex,
        company_id=company_id,
        leave=tuple(emissions.others_in_flight()) if in_flight else (),
    )
    applied, sent_ids = 0, set[str]()
    for _ in range(ROUNDS):
        claimed, sent = await _deliver_batch(factory, secret=secret, claim=claim)
        applied += len(sent)
        sent_ids.update(sent)
        if claimed < BATCH:
            break
    if company_id is not None:
        waiting_for = [event_id for event_id in mine if event_id not in sent_ids]
        if waiting_for or not mine:
            applied += await _after_others(
                factory,
                secret=secret,
                claim=claim,
                company_id=company_id,
                due_by=started,
                only=waiting_for or None,
            )
    return applied


@dataclass(frozen=True)
class _Claim:
    token: str
    company_id: int | None
    leave: tuple[str, ...]  # callbacks other requests of this process will send


async def _after_others(
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    claim: _Claim,
    company_id: int,
    due_by: datetime,
    only: list[str] | None,
) -> int:
    """Until no callback of the company due by `due_by` (of `only`, when given) is unsent:
    send those nobody holds (one whose claim is not committed yet looks free, and one whose
    lease lapsed is free), wait for those another delivery holds. A callback that failed is
    due later, so it does not hold this up."""
    applied = 0
    pause_seconds, waited = FIRST_WAIT_SECONDS, 0.0
    while waited < WAIT_LIMIT_SECONDS:
        leases = await _unsent_leases(factory, company_id=company_id, due_by=due_by, only=only)
        if not leases:
            break
        now = utcnow()
        if any(until is None or until <= now for until in leases):
            _, sent = await _deliver_batch(factory, secret=secret, claim=claim)
            applied += len(sent)
            if sent:
                continue
        await asyncio.sleep(pause_seconds)
        waited += pause_seconds
        pause_seconds = min(pause_seconds * 2, LAST_WAIT_SECONDS)
    return applied


def retry_delay(attempts: int) -> timedelta:
    """1 s after the first failure, doubling up to an hour."""
    return min(timedelta(seconds=2 ** min(attempts - 1, 12)), RETRY_CAP)


def _claim_statement(*, of_company: bool) -> Any:
    """Claim the due, unclaimed callbacks (of one company) for a lease, leaving those named
    (`c_leave`) to the requests that will send them. Built once for each shape: every sandbox
    request that moves money runs one. On the table, not the mapped class: the ORM annotates
    a copy of an UPDATE of a mapped class at every execution, which SQLAlchemy then keys for
    its compiled cache again."""
    now = bindparam("c_now", type_=_CALLBACKS.due_at.type)
    due = (
        select(_CALLBACKS.id)
        .where(
            _CALLBACKS.sent_at.is_(None),
            _CALLBACKS.due_at <= now,
            or_(_CALLBACKS.locked_until.is_(None), _CALLBACKS.locked_until <= now),
            _CALLBACKS.event_id.not_in(bindparam("c_leave", expanding=True)),
        )
        .order_by(_CALLBACKS.id)
        .limit(BATCH)
    )
    if of_company:
        due = due.where(_CALLBACKS.company_id == bindparam("c_company_id"))
    return (
        update(_TABLE)
        .where(_CALLBACKS.id.in_(for_update(due, skip_locked=True).scalar_subquery()))
        .values(lock_token=bindparam("c_token"), locked_until=bindparam("c_until"))
        .returning(*_CALLBACKS)
    )


_CLAIM = {of_company: _claim_statement(of_company=of_company) for of_company in (False, True)}


async def _claim(factory: async_sessionmaker[AsyncSession], claim: _Claim) -> list[Row[Any]]:
    now = utcnow()
    params = {
        "c_now": now,
        "c_leave": list(claim.leave),
        "c_token": claim.token,
        "c_until": now + LEASE,
    }
    if claim.company_id is not None:
        params["c_company_id"] = claim.company_id
    async with unit_of_work(factory) as session:
        claimed = await session.execute(_CLAIM[claim.company_id is not None], params)
        # In the order they were queued: a subject's callbacks apply in the order they happened.
        return sorted(claimed, key=lambda callback: callback.id)


def _leases_statement(*, of_some: bool) -> Any:
    """The leases of a company's unsent callbacks due by `u_due_by` (of those named in
    `u_only`). Built once for each shape: a sandbox request waiting on another's delivery asks
    it again and again."""
    stmt = (
        select(_CALLBACKS.locked_until)
        .where(
            _CALLBACKS.company_id == bindparam("u_company_id"),
            _CALLBACKS.sent_at.is_(None),
            _CALLBACKS.due_at <= bindparam("u_due_by", type_=_CALLBACKS.due_at.type),
        )
        .limit(BATCH)
    )
    if of_some:
        stmt = stmt.where(_CALLBACKS.event_id.in_(bindparam("u_only", expanding=True)))
    return stmt


_LEASES = {of_some: _leases_statement(of_some=of_some) for of_some in (False, True)}


async def _unsent_leases(
    factory: async_sessionmaker[AsyncSession],
    *,
    company_id: int,
    due_by: datetime,
    only: list[str] | None,
) -> list[datetime | None]:
    """The leases of the company's unsent callbacks that were due by `due_by`."""
    params: dict[str, Any] = {"u_company_id": company_id, "u_due_by": due_by}
    if only is not None:
        params["u_only"] = only
    async with factory() as session:
        return list((await session.execute(_LEASES[only is not None], params)).scalars())


async def _deliver_batch(
    factory: async_sessionmaker[AsyncSession], *, secret: str, claim: _Claim
) -> tuple[int, list[str]]:
    """Claim a batch and send it; returns how many were claimed and the event ids sent."""
    due = await _claim(factory, claim)
    sent: list[str] = []
    for callback in due:
        body = inbound.render(
            event_id=callback.event_id,
            type_=callback.type,
            company_id=callback.company_id,
            created_at=timestamp(callback.created_at),
            data=callback.payload,
        )
        headers = inbound.signature_headers(secret, body)
        try:
            await inbound.receive(
                factory,
                provider=ExternalProvider(callback.provider),
                body=body,
                signature=headers[inbound.SIGNATURE_HEADER],
                timestamp=headers[inbound.TIMESTAMP_HEADER],
                secret=secret,
                alongside=_marked_sent(callback.id, claim.token),
            )
        except Exception as exc:
            log.warning(
                "sandbox_callback_failed",
                provider=callback.provider,
                type=callback.type,
                error_type=type(exc).__name__,
            )
            later = utcnow() + retry_delay(callback.attempts + 1)
            async with unit_of_work(factory) as session:
                await _release(session, _RETRY, callback.id, claim.token, at=later)
        else:
            sent.append(callback.event_id)
    return len(due), sent


async def _release(
    session: AsyncSession, release: Any, callback_id: int, token: str, *, at: datetime
) -> None:
    """Release a claimed callback with `release` (`_SENT` or `_RETRY`), its time `at`."""
    await driver_statements.execute(
        await driver_statements.connection_of(session),
        release,
        {"d_id": callback_id, "d_token": token, "d_at": at},
    )


def _marked_sent(callback_id: int, token: str) -> inbound.Alongside:
    """The release of a sent callback, run in the transaction that applies it: it is marked
    sent exactly when its effect commits."""

    async def run(session: AsyncSession) -> None:
        await _release(session, _SENT, callback_id, token, at=utcnow())

    return run


def _release_statement(column: str) -> Any:
    """A claimed callback's lease released, with `column` (when it was sent, or when it is due
    again) set to `d_at`; only while the claim still holds it. On the table, as the claim."""
    return (
        update(_TABLE)
        .where(_CALLBACKS.id == bindparam("d_id"), _CALLBACKS.lock_token == bindparam("d_token"))
        .values(
            {
                "attempts": _CALLBACKS.attempts + 1,
                "lock_token": None,
                "locked_until": None,
                column: bindparam("d_at", type_=_CALLBACKS[column].type),
            }
        )
    )


_SENT = _release_statement("sent_at")
_RETRY = _release_statement("due_at")


async def run_forever(
    factory: async_sessionmaker[AsyncSession],
    *,
    secret: str,
    stop: asyncio.Event,
    poll_seconds: float,
) -> None:
    while not stop.is_set():
        try:
            await deliver_due(factory, secret=secret)
        except Exception as exc:  # keep the loop alive through a database hiccup
            log.error("sandbox_callback_loop_error", error_type=type(exc).__name__)
        await pause(stop, poll_seconds)
