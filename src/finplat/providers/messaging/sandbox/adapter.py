"""The sandbox mail provider: keeps each one-time code it is asked to send in a mailbox table
(in its own transaction, as an outside system would), where the sandbox's reveal endpoint
reads it; nothing leaves the machine."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.dialect import upsert
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.messaging.sandbox.models import SandboxMailboxMessage

NAME = "mail"


class SandboxMailer:
    name = NAME

    def __init__(self, factory: async_sessionmaker[AsyncSession]) -> None:
        self.factory = factory

    async def send_code(self, *, company_id: int, reference: str, email: str, code: str) -> None:
        async with unit_of_work(self.factory) as session:
            now = utcnow()
            # A new code for the same reference replaces the one before, as a newer email
            # supersedes an older one in the inbox.
            await session.execute(
                upsert(
                    session,
                    SandboxMailboxMessage,
                    keys=["company_id", "reference"],
                    values={
                        "company_id": company_id,
                        "reference": reference,
                        "email": email,
                        "code": code,
                        "created_at": now,
                        "updated_at": now,
                    },
                )
            )


async def sent_code(session: AsyncSession, *, company_id: int, reference: str) -> str | None:
    """The code the sandbox mailed for `reference`, if it did."""
    stmt = select(SandboxMailboxMessage.code).where(
        SandboxMailboxMessage.company_id == company_id,
        SandboxMailboxMessage.reference == reference,
    )
    found: str | None = (await session.execute(stmt)).scalar_one_or_none()
    return found
