"""Idempotent operations.

Rules (issue "money core", after Stripe's and the IETF Idempotency-Key draft):
* Keys are scoped to the company, 1 to 255 printable ASCII characters.
* The first request claims the key, recording a fingerprint of method, path, query and body.
* A retry with the same request gets the first final response, byte for byte.
* The same key with a different request is 409 `IDEMPOTENCY_KEY_REUSED`.
* A duplicate that arrives while the first is running waits for it (up to a bound) and then
  replays its response, or answers 409 `IDEMPOTENCY_KEY_IN_USE`; it never runs the operation.
* The final response is written in the same transaction as the operation's last effect.
* Business errors (4xx) are final and replayed; technical failures (5xx) are not: the key stays
  claimable and a retry resumes from the last recovery point.
* A worker that crashes keeps its lease until it expires; then a retry takes over.
* Finished keys are kept at least 24 hours, then purged.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError, Conflict, ValidationFailed
from finplat.idempotency import repository
from finplat.kit.clock import utcnow

REQUEST_SCOPE = "request"
STARTED = "started"
FINISHED = "finished"
MAX_KEY_LENGTH = 255
# Printable ASCII without leading or trailing spaces (HTTP drops those, so a key with them
# could not be told apart from the same key without them).
KEY_PATTERN = r"^[!-~](?:[ -~]{0,253}[!-~])?$"
KEY_PATTERN_RE = re.compile(KEY_PATTERN)
RETENTION = timedelta(hours=24)


class IdempotencyKeyReused(Conflict):
    code = "IDEMPOTENCY_KEY_REUSED"
    message = "This Idempotency-Key was already used with a different request."


class IdempotencyKeyInUse(Conflict):
    code = "IDEMPOTENCY_KEY_IN_USE"
    message = "A request with this Idempotency-Key is still being processed; retry shortly."


class InvalidIdempotencyKey(ValidationFailed):
    code = "INVALID_IDEMPOTENCY_KEY"
    message = (
        "The Idempotency-Key must be 1 to 255 printable ASCII characters, without leading or "
        "trailing spaces."
    )


class IdempotencyKeyRequired(ValidationFailed):
    code = "IDEMPOTENCY_KEY_REQUIRED"
    message = "This operation requires an Idempotency-Key header."


class ReferenceReused(ApiError):
    """A business reference (externalReferenceId, merchantReferenceId) reused with other terms."""

    status = 400
    code = "REFERENCE_REUSED_WITH_DIFFERENT_TERMS"
    message = "This reference was already used for an operation with different terms."


class StoredResponse(Exception):
    """Raised by `claim` when the operation already finished: answer with these bytes."""

    def __init__(self, status: int, body: bytes, content_type: str) -> None:
        super().__init__(status)
        self.status = status
        self.body = body
        self.content_type = content_type


@dataclass
class Claim:
    """The right to run (or resume) one idempotent operation.

    `record_id` is None for an operation called without a key: it runs once, with the same
    phases, but nothing is recorded for replay.
    """

    company_id: int
    key: str
    token: str
    recovery_point: str = STARTED
    state: dict[str, Any] = field(default_factory=dict)
    record_id: int | None = None
    lease: timedelta = timedelta(seconds=30)

    @property
    def resumed(self) -> bool:
        return self.recovery_point != STARTED

    def derived_key(self, step: str) -> str:
        """The idempotency key to give a provider for `step`: the same on every retry of this
        operation, so a provider call repeated after a crash is deduplicated there."""
        return derived_key(self.company_id, self.key, step)


def derived_key(company_id: int, key: str, step: str) -> str:
    """`Claim.derived_key` of the operation `key` of `company_id`."""
    digest = hashlib.sha256(f"{company_id}\x1f{key}\x1f{step}".encode()).hexdigest()
    return f"fp_{digest[:40]}"


def fingerprint(method: str, path: str, query: str, body: bytes) -> str:
    """Hash of the request; JSON bodies are canonicalised so key order and spacing don't
    count as a different request."""
    try:
        document = json.loads(body)
    except ValueError:
        return _fingerprint(method, path, query, body)
    return fingerprint_of_json(method, path, query, document)


def fingerprint_of_json(method: str, path: str, query: str, document: Any) -> str:
    """`fingerprint` of a request whose JSON body was parsed already (as `json.loads` parses,
    numbers with a fraction as floats)."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    return _fingerprint(method, path, query, canonical)


def _fingerprint(method: str, path: str, query: str, canonical: bytes) -> str:
    query_items = "&".join(sorted(query.split("&"))) if query else ""
    material = b"\x1f".join(
        [method.upper().encode(), path.encode(), query_items.encode(), canonical]
    )
    return hashlib.sha256(material).hexdigest()


def validate_key(key: str) -> str:
    if not KEY_PATTERN_RE.match(key):
        raise InvalidIdempotencyKey()
    return key


def keyless_key() -> str:
    """A key for an operation called without one: 128 random bits, so no client's key is
    ever the same by chance."""
    return f"nokey-{secrets.token_hex(16)}"


def ephemeral_claim(company_id: int) -> Claim:
    """A claim for an operation called without a key (no replay, fresh provider keys)."""
    return Claim(company_id=company_id, key=keyless_key(), token="")


async def claim(
    session: AsyncSession,
    *,
    company_id: int,
    key: str,
    fingerprint_: str,
    method: str,
    path: str,
    scope: str = REQUEST_SCOPE,
    lease: timedelta = timedelta(seconds=30),
    wait: timedelta = timedelta(seconds=10),
    poll: float = 0.05,
    mismatch: type[ApiError] = IdempotencyKeyReused,
) -> Claim:
    """Claim `key` for this request, or raise `StoredResponse` / a 409.

    Must be the request's first write: while another request holds the key, this one ends its
    transaction between polls so it holds no lock (and, on SQLite, not the write lock).
    """
    validate_key(key)
    deadline = utcnow() + wait
    while True:
        now = utcnow()
        # Insert first: a new key (nearly every request) costs one statement. A key that exists
        # (or is being inserted: the insert waits for that transaction) inserts nothing and is
        # then read under its row lock.
        token = secrets.token_hex(16)
        record_id = await repository.insert(
            session,
            company_id=company_id,
            scope=scope,
            key=key,
            fingerprint=fingerprint_,
            request_method=method,
            request_path=path,
            recovery_point=STARTED,
            state={},
            lock_token=token,
            locked_until=now + lease,
            created_at=now,
        )
        if record_id is not None:
            return Claim(company_id, key, token, record_id=record_id, lease=lease)
        row = await repository.lock(session, company_id=company_id, scope=scope, key=key)
        if row is None:
            continue  # purged between the two statements: insert again
        if row.fingerprint != fingerprint_:
            raise mismatch()
        if row.completed_at is not None and row.response_status is not None:
            raise StoredResponse(
                row.response_status,
                row.response_body or b"",
                row.response_content_type or "application/json",
            )
        if row.locked_until is None or row.locked_until <= now:
            token = secrets.token_hex(16)
            await repository.take_over(
                session, record_id=row.id, token=token, locked_until=now + lease
            )
            return Claim(
                company_id,
                key,
                token,
                recovery_point=row.recovery_point,
                state=dict(row.state or {}),
                record_id=row.id,
                lease=lease,
            )
        await session.rollback()
        if utcnow() >= deadline:
            raise IdempotencyKeyInUse()
        await asyncio.sleep(poll)


async def checkpoint(
    session: AsyncSession, claim_: Claim, recovery_point: str, **state: Any
) -> None:
    """Commit the work done so far together with how far the operation got."""
    claim_.recovery_point = recovery_point
    claim_.state.update(state)
    if claim_.record_id is not None and not await repository.update_owned(
        session,
        record_id=claim_.record_id,
        token=claim_.token,
        recovery_point=recovery_point,
        state=dict(claim_.state),
        locked_until=utcnow() + claim_.lease,
    ):
        raise IdempotencyKeyInUse("Another request took over this Idempotency-Key.")
    await session.commit()


async def note(session: AsyncSession, claim_: Claim, recovery_point: str, **state: Any) -> None:
    """Write how far the operation got in the caller's transaction, committed by its next
    commit: for a step whose commit happens inside another operation it calls (so both are
    written together or not at all)."""
    claim_.recovery_point = recovery_point
    claim_.state.update(state)
    if claim_.record_id is not None and not await repository.update_owned(
        session,
        record_id=claim_.record_id,
        token=claim_.token,
        recovery_point=recovery_point,
        state=dict(claim_.state),
        locked_until=utcnow() + claim_.lease,
    ):
        raise IdempotencyKeyInUse("Another request took over this Idempotency-Key.")


def reached(claim_: Claim, recovery_point: str, **state: Any) -> None:
    """Note how far the operation got without writing it: for a last step that `complete`
    follows in the same transaction (it stores the state with the final answer). A crash
    before that commit resumes from the last committed checkpoint, which must lead to the
    same answer."""
    claim_.recovery_point = recovery_point
    claim_.state.update(state)


async def complete(
    session: AsyncSession, claim_: Claim, *, status: int, body: bytes, content_type: str
) -> None:
    """Store the final response, in the caller's transaction (the one with the last effect)."""
    if claim_.record_id is None:
        return
    if not await repository.update_owned(
        session,
        record_id=claim_.record_id,
        token=claim_.token,
        recovery_point=FINISHED,
        state=dict(claim_.state),
        response_status=status,
        response_body=body,
        response_content_type=content_type,
        completed_at=utcnow(),
        lock_token=None,
        locked_until=None,
    ):
        raise IdempotencyKeyInUse("Another request took over this Idempotency-Key.")


async def store_failure(
    factory: async_sessionmaker[AsyncSession],
    claim_: Claim,
    *,
    scope: str,
    fingerprint_: str,
    method: str,
    path: str,
    status: int,
    body: bytes,
    content_type: str,
) -> None:
    """Make a business error the key's final answer (after its transaction rolled back)."""
    if claim_.record_id is None:
        return
    now = utcnow()
    async with unit_of_work(factory) as session:
        if await repository.update_owned(
            session,
            record_id=claim_.record_id,
            token=claim_.token,
            recovery_point=FINISHED,
            response_status=status,
            response_body=body,
            response_content_type=content_type,
            completed_at=now,
            lock_token=None,
            locked_until=None,
        ):
            return
        # The claim was rolled back with the failed work; record the answer afresh unless a
        # concurrent retry has claimed the key in the meantime.
        await repository.insert(
            session,
            company_id=claim_.company_id,
            scope=scope,
            key=claim_.key,
            fingerprint=fingerprint_,
            request_method=method,
            request_path=path,
            recovery_point=FINISHED,
            state={},
            response_status=status,
            response_body=body,
            response_content_type=content_type,
            created_at=now,
            completed_at=now,
        )


async def release(factory: async_sessionmaker[AsyncSession], claim_: Claim) -> None:
    """Give up the lease after a technical failure so a retry can resume at once."""
    if claim_.record_id is None:
        return
    async with unit_of_work(factory) as session:
        await repository.update_owned(
            session,
            record_id=claim_.record_id,
            token=claim_.token,
            lock_token=None,
            locked_until=None,
        )


async def purge_expired(session: AsyncSession, *, retention: timedelta = RETENTION) -> int:
    """Delete finished keys older than the retention (at least 24 hours)."""
    return await repository.purge_completed_before(
        session, cutoff=utcnow() - max(retention, RETENTION)
    )


async def claim_reference(
    session: AsyncSession,
    *,
    company_id: int,
    scope: str,
    reference: str,
    terms: dict[str, Any],
    lease: timedelta = timedelta(seconds=30),
) -> Claim:
    """Reuse rules for business references (`externalReferenceId`, `merchantReferenceId`):
    the same reference with the same terms returns the first result; with other terms it is
    400 `REFERENCE_REUSED_WITH_DIFFERENT_TERMS`."""
    terms_fingerprint = hashlib.sha256(
        json.dumps(terms, sort_keys=True, default=str, separators=(",", ":")).encode()
    ).hexdigest()
    return await claim(
        session,
        company_id=company_id,
        key=reference,
        fingerprint_=terms_fingerprint,
        method="REF",
        path=scope,
        scope=scope,
        lease=lease,
        mismatch=ReferenceReused,
    )
