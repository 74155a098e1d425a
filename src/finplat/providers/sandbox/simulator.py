"""What every sandbox provider shares: latency, injected faults and outgoing callbacks."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import timedelta
from typing import Any, cast

from sqlalchemy import Table, insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db import driver_statements, open_sessions
from finplat.kit.clock import utcnow
from finplat.providers.errors import ProviderRejected, ProviderTechnicalError
from finplat.providers.sandbox import emissions, faults
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.models import SandboxCallback

# Longer than any configured provider timeout: a hung call is always cut by the caller.
HANG_SECONDS = 3600.0
DEFAULT_ERROR_STATUS = 422
# A callback queued: an INSERT into the table, built once (every sandbox purchase queues one;
# the ORM's flush of a new object costs nearly three times the statement: docs/performance.md).
_QUEUE = insert(cast(Table, SandboxCallback.__table__))


class TransactionHeldAcrossProviderCall(RuntimeError):
    """A programming error: a provider was called while a unit of work (a request's, a job's)
    had its transaction open."""

    def __init__(self, provider: str, operation: str) -> None:
        super().__init__(
            f"{provider}.{operation} was called while a unit of work's transaction was open; "
            "commit (or pass the session to `commit_then_call`) before calling a provider."
        )


class Simulator:
    def __init__(
        self, factory: async_sessionmaker[AsyncSession], *, provider: str, latency_ms: int = 0
    ) -> None:
        self.factory = factory
        self.provider = provider
        self.latency_ms = latency_ms

    async def enter(self, company_id: int, operation: str) -> FaultMode | None:
        """Start an operation: wait the simulated latency, then apply an injected fault.

        `error` and `transient` raise here; `timeout` and `pending` are returned for the
        operation to act on (do the work, then hang; or answer pending).
        """
        if open_sessions.holds_transaction():
            raise TransactionHeldAcrossProviderCall(self.provider, operation)
        if self.latency_ms:
            await asyncio.sleep(self.latency_ms / 1000)
        fault = await faults.take(
            self.factory, company_id=company_id, provider=self.provider, operation=operation
        )
        if fault is None:
            return None
        if fault.mode is FaultMode.TRANSIENT:
            raise ProviderTechnicalError(self.provider, operation, "injected transient failure")
        if fault.mode is FaultMode.ERROR:
            status = fault.http_status or DEFAULT_ERROR_STATUS
            raise ProviderRejected(
                f"The {self.provider} provider refused {operation} (injected error).",
                status=status,
                code="PROVIDER_REJECTED",
                validation_errors={"Provider": [f"{self.provider} answered HTTP {status}."]},
                details=json.dumps(
                    {"provider": self.provider, "operation": operation, "httpStatus": status}
                ),
            )
        return fault.mode

    async def hang(self) -> None:
        """Never answer (the caller's timeout cuts the call)."""
        await asyncio.sleep(HANG_SECONDS)

    async def emit_callback(
        self,
        session: AsyncSession,
        *,
        company_id: int,
        type_: str,
        data: dict[str, Any],
        delay: timedelta = timedelta(0),
    ) -> str:
        """Queue a callback to the platform, sent by the delivery job (or at once by a sandbox
        endpoint). Written in the simulator's own transaction, with the state it reports."""
        event_id = f"{self.provider}_evt_{uuid.uuid4().hex}"
        now = utcnow()
        await driver_statements.execute(
            await driver_statements.connection_of(session),
            _QUEUE,
            {
                "provider": self.provider,
                "event_id": event_id,
                "company_id": company_id,
                "type": type_,
                "payload": json.dumps(data, separators=(",", ":"), default=str),
                "created_at": now,
                "due_at": now + delay,
            },
        )
        emissions.note(event_id)
        return event_id
