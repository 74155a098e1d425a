"""The journal tables carry no foreign keys; `verify` checks their references instead."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.clock import utcnow
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.models import LedgerEntry, LedgerTransfer
from finplat.ledger.verification import verify
from tests.ledger.accounts import Book, fund, open_book

MISSING = 999_999_999


async def _posted_reservation(session: AsyncSession, book: Book) -> int:
    """A pending transfer and its POST resolution; returns the resolution's id."""
    await fund(session, book, book.master, 1_000)
    pending = await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.master.id, -100), Leg(book.card.id, 100)],
        code="test.reservation",
        expires_at=utcnow() + timedelta(hours=1),
    )
    posted = await ledger.post_pending(
        session, company_id=book.company_id, pending_id=pending.transfer_id
    )
    assert (await verify(session)).ok
    return posted.transfer_id


async def _an_entry_of(session: AsyncSession, transfer_id: int) -> int:
    query = select(LedgerEntry.id).where(LedgerEntry.transfer_id == transfer_id).limit(1)
    return (await session.execute(query)).scalar_one()


async def test_an_entry_of_a_missing_transfer_is_reported(session: AsyncSession) -> None:
    book = await open_book(session)
    resolution = await _posted_reservation(session, book)
    entry = await _an_entry_of(session, resolution)
    await session.execute(
        update(LedgerEntry).where(LedgerEntry.id == entry).values(transfer_id=MISSING)
    )
    problems = (await verify(session)).problems
    assert f"entry {entry} belongs to missing transfer {MISSING}" in problems


async def test_an_entry_on_a_missing_account_is_reported(session: AsyncSession) -> None:
    book = await open_book(session)
    resolution = await _posted_reservation(session, book)
    entry = await _an_entry_of(session, resolution)
    await session.execute(
        update(LedgerEntry).where(LedgerEntry.id == entry).values(account_id=MISSING)
    )
    problems = (await verify(session)).problems
    assert f"entry {entry} is on missing account {MISSING}" in problems


async def test_a_resolution_of_no_pending_transfer_is_reported(session: AsyncSession) -> None:
    book = await open_book(session)
    resolution = await _posted_reservation(session, book)
    await session.execute(
        update(LedgerTransfer).where(LedgerTransfer.id == resolution).values(pending_id=MISSING)
    )
    problems = (await verify(session)).problems
    assert f"transfer {resolution} resolves {MISSING}, which is no pending transfer" in problems


async def test_a_resolution_releasing_less_than_was_reserved_is_reported(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    resolution = await _posted_reservation(session, book)
    pending_id = (
        await session.execute(
            select(LedgerTransfer.pending_id).where(LedgerTransfer.id == resolution)
        )
    ).scalar_one()
    release = (
        await session.execute(
            select(LedgerEntry.id).where(
                LedgerEntry.transfer_id == resolution, LedgerEntry.layer == "pending_debit"
            )
        )
    ).scalar_one()
    await session.execute(update(LedgerEntry).where(LedgerEntry.id == release).values(amount=60))
    problems = (await verify(session)).problems
    assert (
        f"resolved pending transfer {pending_id} left -40 in pending_debit "
        f"on account {book.master.id}"
    ) in problems
