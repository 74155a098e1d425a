"""The one inbound path for provider callbacks: verified, de-duplicated, processed once.

A real provider's webhook (through `POST /api/v2/providers/{provider}/callbacks`) and the
sandbox providers' callbacks (through `finplat.providers.sandbox.delivery`) both end in `receive`.

Wire format: the body is `{"id", "type", "companyId", "createdAt", "data"}`; the header
`X-Provider-Timestamp` is the Unix time (whole seconds) the provider signed it at, and
`X-Provider-Signature` the lowercase hex HMAC-SHA256, keyed by the provider callback secret, of
that header's exact value, a `.` and the exact body (Stripe's scheme). A callback without a
timestamp, or signed further from the platform's clock than the tolerance (5 minutes by
default) either way, is refused: a captured callback cannot be replayed after the tolerance,
and within it the event id de-duplicates.

A signed body is still outside input: the envelope is validated before anything is written
(`id` and `type` one-line text within their columns, `companyId` an id in range, no NUL in any
text of `data` since PostgreSQL cannot store it, valid Unicode, bounded nesting); a body that
fails is 400 `MALFORMED_CALLBACK` with `ValidationErrors`, never a database error.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Any, cast

import structlog
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, JsonValue, ValidationError
from sqlalchemy import Table, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.companies import repository as companies
from finplat.db import driver_statements
from finplat.db.dialect import inserts_ignoring_conflicts
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import Unauthorized, ValidationFailed
from finplat.kit.clock import utcnow
from finplat.kit.fields import SafeText
from finplat.kit.schemas import MAX_ID
from finplat.providers.callbacks import ProviderCallback
from finplat.providers.names import ExternalProvider

SIGNATURE_HEADER = "X-Provider-Signature"
TIMESTAMP_HEADER = "X-Provider-Timestamp"
DEFAULT_TOLERANCE = timedelta(minutes=5)
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
log = structlog.get_logger("finplat.providers.inbound")
# The signing headers as the OpenAPI description lists them: the endpoints read them from the
# request (`signed_headers`), for FastAPI's validation of two optional header parameters cost
# about 70 µs of CPU each per call, a twentieth of the real-time decision.
SIGNED_HEADERS_OPENAPI: list[dict[str, Any]] = [
    {
        "name": name,
        "in": "header",
        "required": False,
        "description": description,
        "schema": {"type": "string"},
    }
    for name, description in (
        (SIGNATURE_HEADER, "Lowercase hex HMAC-SHA256 of the timestamp, `.` and the body."),
        (TIMESTAMP_HEADER, "Unix time in whole seconds the request was signed at."),
    )
]

Handler = Callable[[AsyncSession, int, dict[str, Any]], Awaitable[None]]
Alongside = Callable[[AsyncSession], Awaitable[None]]
_HANDLERS: dict[tuple[str, str], Handler] = {}


class InvalidCallbackSignature(Unauthorized):
    code = "INVALID_CALLBACK_SIGNATURE"
    message = "The callback signature does not match its body."


class InvalidCallbackTimestamp(Unauthorized):
    code = "INVALID_CALLBACK_TIMESTAMP"
    message = (
        f"{TIMESTAMP_HEADER} is required: the Unix time in whole seconds the callback was "
        "signed at, signed with the body."
    )


class StaleCallback(Unauthorized):
    code = "CALLBACK_TIMESTAMP_OUT_OF_TOLERANCE"
    message = "The callback was signed too long ago, or too far in the future, to be accepted."


class MalformedCallback(ValidationFailed):
    code = "MALFORMED_CALLBACK"
    message = "The callback body is not a provider event."


def handler(provider: str, type_: str) -> Callable[[Handler], Handler]:
    """Register the function that applies one type of callback from one provider."""

    def register(fn: Handler) -> Handler:
        _HANDLERS[(provider, type_)] = fn
        return fn

    return register


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The signature of `body` sent at `timestamp` (the header's exact text)."""
    signed = timestamp.encode() + b"." + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def signature_headers(secret: str, body: bytes) -> dict[str, str]:
    """The headers a provider sends with `body` now."""
    timestamp = str(int(utcnow().timestamp()))
    return {TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: sign(secret, timestamp, body)}


def signed_headers(headers: Mapping[str, str]) -> tuple[str | None, str | None]:
    """A provider request's signature and timestamp headers (`verify`'s), None when absent."""
    return headers.get(SIGNATURE_HEADER), headers.get(TIMESTAMP_HEADER)


def verify(
    secret: str,
    body: bytes,
    *,
    signature: str | None,
    timestamp: str | None,
    tolerance: timedelta,
) -> None:
    """Refuse a callback whose signature does not match its timestamp and body, or whose
    timestamp is outside `tolerance` of now (either way)."""
    if timestamp is None or not _TIMESTAMP.fullmatch(timestamp):
        raise InvalidCallbackTimestamp()
    if signature is None or not hmac.compare_digest(signature, sign(secret, timestamp, body)):
        raise InvalidCallbackSignature()
    if abs(utcnow().timestamp() - int(timestamp)) > tolerance.total_seconds():
        raise StaleCallback()


def render(*, event_id: str, type_: str, company_id: int, created_at: str, data: str) -> bytes:
    """The bytes a provider sends (data already serialised by the provider)."""
    return (
        f'{{"id":{json.dumps(event_id)},"type":{json.dumps(type_)},"companyId":{company_id},'
        f'"createdAt":{json.dumps(created_at)},"data":{data}}}'
    ).encode()


@dataclass(frozen=True)
class Receipt:
    event_id: str
    duplicate: bool


@dataclass(frozen=True)
class _Parsed:
    event_id: str
    type: str
    company_id: int
    data: dict[str, Any]


def _no_nul(value: JsonValue) -> JsonValue:
    """PostgreSQL text cannot hold NUL: refused in any text of the value, keys included."""
    if isinstance(value, str) and "\x00" in value:
        raise ValueError("Text must not contain NUL (\\u0000).")
    if isinstance(value, list):
        for item in value:
            _no_nul(item)
    if isinstance(value, dict):
        for key, item in value.items():
            _no_nul(key)
            _no_nul(item)
    return value


class _Envelope(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    id: Annotated[SafeText, Field(max_length=128)]
    type: Annotated[SafeText, Field(max_length=64)]
    companyId: Annotated[int, Field(ge=1, le=MAX_ID)]
    data: Annotated[dict[str, JsonValue], AfterValidator(_no_nul)]


def _field_errors(exc: ValidationError, *, within: str = "") -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False):
        loc = (within, *error["loc"]) if within else error["loc"]
        key = ".".join(str(part) for part in loc) or "body"
        fields.setdefault(key, []).append(error["msg"].removeprefix("Value error, "))
    return fields


def _parse(body: bytes) -> _Parsed:
    try:
        envelope = _Envelope.model_validate_json(body)
    except ValidationError as exc:
        raise MalformedCallback(validation_errors=_field_errors(exc)) from None
    return _Parsed(envelope.id, envelope.type, envelope.companyId, envelope.data)


async def receive(
    factory: async_sessionmaker[AsyncSession],
    *,
    provider: ExternalProvider,
    body: bytes,
    signature: str | None,
    timestamp: str | None,
    secret: str,
    tolerance: timedelta = DEFAULT_TOLERANCE,
    alongside: Alongside | None = None,
) -> Receipt:
    """Verify, record and apply one callback, in one transaction.

    The callback row and the handler's changes commit together: if the handler fails, neither
    stays and the provider's retry processes it again; once committed, any repeat of the same
    event id is acknowledged without effect. So a row is there only once processed, and it is
    written processed. `alongside` runs in that transaction after the callback is applied (or
    found a duplicate): the sender's own record that it was delivered.
    """
    verify(secret, body, signature=signature, timestamp=timestamp, tolerance=tolerance)
    parsed = _parse(body)
    async with unit_of_work(factory) as session:
        now = utcnow()
        logged = {
            "provider": provider.value,
            "event_id": parsed.event_id,
            "company_id": parsed.company_id,
            "type": parsed.type,
            "received_at": now,
            "processed_at": now,
            "duplicates": 0,
        }
        connection = await driver_statements.connection_of(session)
        inserted = await driver_statements.returning(
            connection, _LOG[connection.dialect.name], logged
        )
        if not inserted:
            await session.execute(
                update(ProviderCallback)
                .where(
                    ProviderCallback.provider == provider.value,
                    ProviderCallback.event_id == parsed.event_id,
                )
                .values(duplicates=ProviderCallback.duplicates + 1)
            )
            log.info("provider_callback_duplicate", provider=provider.value, type=parsed.type)
        else:
            await _apply(session, provider, parsed)
        if alongside is not None:
            await alongside(session)
    return Receipt(parsed.event_id, duplicate=not inserted)


# Every provider callback runs it: built once, its values bound at execution.
_CALLBACKS = cast(Table, ProviderCallback.__table__)
_LOG = {
    name: insert.returning(_CALLBACKS.c.id)
    for name, insert in inserts_ignoring_conflicts(_CALLBACKS).items()
}


async def _apply(session: AsyncSession, provider: ExternalProvider, parsed: _Parsed) -> None:
    apply = _HANDLERS.get((provider.value, parsed.type))
    if apply is None:
        log.info("provider_callback_ignored", provider=provider.value, type=parsed.type)
        return
    # Kept referenced until the handler returns: the session's identity map holds objects
    # weakly, and the handler's events look the company up again (`session.get`, answered
    # from the map while the object lives).
    company = await companies.get(session, parsed.company_id)
    if company is None:
        log.info("provider_callback_unknown_company", provider=provider.value, type=parsed.type)
        return
    bind_company(session, parsed.company_id)
    try:
        await apply(session, parsed.company_id, parsed.data)
    except ValidationError as exc:
        # A handler that reads its data with a Pydantic model: name each field at fault.
        raise MalformedCallback(
            f"Unreadable {parsed.type} callback.",
            validation_errors=_field_errors(exc, within="data"),
        ) from None
    except (KeyError, TypeError, ValueError) as exc:
        # A well-signed callback this platform cannot read: a provider contract problem.
        raise MalformedCallback(
            f"Unreadable {parsed.type} callback: {type(exc).__name__}."
        ) from None
