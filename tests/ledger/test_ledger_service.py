"""The ledger's rules, one per test, on a real database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import event, func, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.kit.clock import set_clock, utcnow
from finplat.ledger import repository
from finplat.ledger import service as ledger
from finplat.ledger.core import (
    MAX_BALANCE,
    LedgerRuleError,
    Leg,
    PostingAccount,
    TransferStatus,
)
from finplat.ledger.models import LedgerAccount, LedgerBalance, LedgerEntry, LedgerTransfer
from finplat.ledger.verification import verify
from tests.databases import backend
from tests.ledger.accounts import Book, available, fund, open_book


async def test_posted_transfer_moves_money_between_accounts(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    assert await available(session, book, book.card) == 1_000
    assert await available(session, book, book.settlement) == -1_000


async def test_multi_leg_transfer_balances(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.master, 10_000)
    await ledger.post_transfer(
        session,
        company_id=book.company_id,
        legs=[Leg(book.master.id, -1_000), Leg(book.card.id, 990), Leg(book.fees.id, 10)],
        code="card.topup",
    )
    assert await available(session, book, book.card) == 990
    assert await available(session, book, book.fees) == 10
    assert await available(session, book, book.master) == 9_000


async def test_unbalanced_legs_are_refused(session: AsyncSession) -> None:
    book = await open_book(session)
    with pytest.raises(LedgerRuleError):
        await ledger.post_transfer(
            session,
            company_id=book.company_id,
            legs=[Leg(book.settlement.id, -100), Leg(book.card.id, 99)],
            code="bad",
        )


async def test_legs_balancing_only_across_currencies_are_refused(session: AsyncSession) -> None:
    book = await open_book(session)
    with pytest.raises(LedgerRuleError):
        await ledger.post_transfer(
            session,
            company_id=book.company_id,
            legs=[Leg(book.settlement.id, -100), Leg(book.usdc_card.id, 100)],
            code="bad",
        )


async def test_single_leg_and_zero_legs_are_refused(session: AsyncSession) -> None:
    book = await open_book(session)
    with pytest.raises(LedgerRuleError):
        await ledger.post_transfer(
            session, company_id=book.company_id, legs=[Leg(book.card.id, 0)], code="bad"
        )
    with pytest.raises(LedgerRuleError):
        await ledger.post_transfer(
            session,
            company_id=book.company_id,
            legs=[Leg(book.card.id, 0), Leg(book.settlement.id, 0)],
            code="bad",
        )


async def test_debit_beyond_available_is_insufficient_funds(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 500)
    with pytest.raises(ledger.InsufficientFunds):
        await ledger.post_transfer(
            session,
            company_id=book.company_id,
            legs=[Leg(book.card.id, -501), Leg(book.settlement.id, 501)],
            code="unload",
        )
    assert await available(session, book, book.card) == 500


async def test_account_that_may_go_negative_can(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 5)
    assert await available(session, book, book.settlement) == -5


async def test_a_reservation_requiring_available_funds_cannot_take_an_account_below_zero(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 5)
    # The settlement account may go negative, but not by a reservation that must be covered.
    with pytest.raises(ledger.InsufficientFunds):
        await ledger.create_pending(
            session,
            company_id=book.company_id,
            legs=[Leg(book.settlement.id, -1), Leg(book.card.id, 1)],
            code="covered",
            expires_at=None,
            require_available=True,
        )
    await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -5), Leg(book.settlement.id, 5)],
        code="covered",
        expires_at=None,
        require_available=True,
    )
    assert await available(session, book, book.card) == 0


async def test_another_companys_account_cannot_be_used(session: AsyncSession) -> None:
    mine, theirs = await open_book(session, "Mine"), await open_book(session, "Theirs")
    await fund(session, theirs, theirs.card, 1_000)
    with pytest.raises(LedgerRuleError):
        await ledger.post_transfer(
            session,
            company_id=mine.company_id,
            legs=[Leg(theirs.card.id, -1_000), Leg(mine.card.id, 1_000)],
            code="steal",
        )
    assert await available(session, theirs, theirs.card) == 1_000


async def test_pending_reserves_the_debit_and_announces_the_credit(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.master, 1_000)
    await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.master.id, -400), Leg(book.card.id, 400)],
        code="card.topup",
        expires_at=None,
    )
    master = await ledger.balance(session, company_id=book.company_id, account_id=book.master.id)
    card = await ledger.balance(session, company_id=book.company_id, account_id=book.card.id)
    assert (master.posted, master.pending_debits, master.available) == (1_000, 400, 600)
    assert (card.posted, card.pending_credits, card.available) == (0, 400, 0)


async def test_reserved_funds_cannot_be_spent_twice(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    legs = [Leg(book.card.id, -700), Leg(book.settlement.id, 700)]
    await ledger.create_pending(
        session, company_id=book.company_id, legs=legs, code="payout", expires_at=None
    )
    with pytest.raises(ledger.InsufficientFunds):
        await ledger.create_pending(
            session, company_id=book.company_id, legs=legs, code="payout", expires_at=None
        )


async def test_posting_in_full_settles_the_reservation(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.master, 1_000)
    pending = await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.master.id, -400), Leg(book.card.id, 400)],
        code="card.topup",
        expires_at=None,
    )
    await ledger.post_pending(session, company_id=book.company_id, pending_id=pending.transfer_id)
    master = await ledger.balance(session, company_id=book.company_id, account_id=book.master.id)
    card = await ledger.balance(session, company_id=book.company_id, account_id=book.card.id)
    assert (master.posted, master.pending_debits) == (600, 0)
    assert (card.posted, card.pending_credits) == (400, 0)


async def test_partial_post_releases_the_remainder(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    pending = await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -800), Leg(book.settlement.id, 800)],
        code="purchase",
        expires_at=None,
    )
    await ledger.post_pending(
        session,
        company_id=book.company_id,
        pending_id=pending.transfer_id,
        legs=[Leg(book.card.id, -300), Leg(book.settlement.id, 300)],
    )
    card = await ledger.balance(session, company_id=book.company_id, account_id=book.card.id)
    assert (card.posted, card.pending_debits, card.available) == (700, 0, 700)


async def test_partial_post_above_the_reservation_is_refused(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    pending = await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -300), Leg(book.settlement.id, 300)],
        code="purchase",
        expires_at=None,
    )
    with pytest.raises(LedgerRuleError):
        await ledger.post_pending(
            session,
            company_id=book.company_id,
            pending_id=pending.transfer_id,
            legs=[Leg(book.card.id, -301), Leg(book.settlement.id, 301)],
        )


async def test_void_releases_without_moving_money(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    pending = await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -800), Leg(book.settlement.id, 800)],
        code="purchase",
        expires_at=None,
    )
    await ledger.void_pending(session, company_id=book.company_id, pending_id=pending.transfer_id)
    card = await ledger.balance(session, company_id=book.company_id, account_id=book.card.id)
    assert (card.posted, card.pending_debits) == (1_000, 0)


async def test_pending_transfer_resolves_exactly_once(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    pending = await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -100), Leg(book.settlement.id, 100)],
        code="purchase",
        expires_at=None,
    )
    await ledger.post_pending(session, company_id=book.company_id, pending_id=pending.transfer_id)
    with pytest.raises(ledger.TransferAlreadyResolved):
        await ledger.post_pending(
            session, company_id=book.company_id, pending_id=pending.transfer_id
        )
    with pytest.raises(ledger.TransferAlreadyResolved):
        await ledger.void_pending(
            session, company_id=book.company_id, pending_id=pending.transfer_id
        )
    assert await available(session, book, book.card) == 900


@pytest.mark.parametrize("resolve", ["post", "void"])
async def test_a_settler_that_loses_the_race_is_told_already_resolved_not_expired(
    session: AsyncSession, session_factory: async_sessionmaker[AsyncSession], resolve: str
) -> None:
    """A caller that loaded the pending transfer before another transaction resolved it (a
    parallel refresh, the expiry job) is told TRANSFER_ALREADY_RESOLVED, whatever its session
    still holds."""
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    pending = await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -100), Leg(book.settlement.id, 100)],
        code="fx.trade",
        expires_at=utcnow() + timedelta(minutes=5),
    )
    # Loaded while still PENDING, as a losing settler's `_pending_transfer` loads it.
    loaded = await session.get(LedgerTransfer, pending.transfer_id)
    assert loaded is not None
    assert loaded.status == TransferStatus.PENDING.value
    async with session_factory() as winner:
        await ledger.post_pending(
            winner, company_id=book.company_id, pending_id=pending.transfer_id
        )
        await winner.commit()
    loser = ledger.post_pending if resolve == "post" else ledger.void_pending
    with pytest.raises(ledger.TransferAlreadyResolved):
        await loser(session, company_id=book.company_id, pending_id=pending.transfer_id)
    assert await available(session, book, book.card) == 900


async def test_posting_after_expiry_is_refused_and_expiry_releases(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    start = datetime(2031, 1, 1, tzinfo=UTC)
    set_clock(lambda: start)
    pending = await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -600), Leg(book.settlement.id, 600)],
        code="payout",
        expires_at=start + timedelta(minutes=5),
    )
    set_clock(lambda: start + timedelta(minutes=6))
    with pytest.raises(ledger.TransferExpired):
        await ledger.post_pending(
            session, company_id=book.company_id, pending_id=pending.transfer_id
        )
    assert await ledger.expire_due(session) >= 1
    status = (
        await session.execute(
            select(LedgerTransfer.status).where(LedgerTransfer.id == pending.transfer_id)
        )
    ).scalar_one()
    assert status == TransferStatus.EXPIRED.value
    assert await available(session, book, book.card) == 1_000


async def test_debit_larger_than_any_shard_is_taken_across_shards(session: AsyncSession) -> None:
    book = await open_book(session)
    assert book.master.shard_count > 1
    for _ in range(book.master.shard_count * 2):
        await fund(session, book, book.master, 100)  # spread over random shards
    total = 100 * book.master.shard_count * 2
    result = await ledger.post_transfer(
        session,
        company_id=book.company_id,
        legs=[Leg(book.master.id, -total), Leg(book.card.id, total)],
        code="sweep",
    )
    assert len({e.shard for e in result.entries if e.account_id == book.master.id}) > 1
    assert await available(session, book, book.master) == 0
    with pytest.raises(ledger.InsufficientFunds):
        await ledger.post_transfer(
            session,
            company_id=book.company_id,
            legs=[Leg(book.master.id, -1), Leg(book.card.id, 1)],
            code="sweep",
        )


async def test_money_held_in_one_shard_costs_at_most_one_failed_debit(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    await fund(session, book, book.master, 1_000)  # one credit: one shard holds it all
    updates: list[str] = []

    def count(*args: object) -> None:
        statement = str(args[2])
        if statement.startswith("UPDATE ledger_balances"):
            updates.append(statement)

    event.listen(Engine, "before_cursor_execute", count)
    try:
        for _ in range(10):
            updates.clear()
            await ledger.post_transfer(
                session,
                company_id=book.company_id,
                legs=[Leg(book.master.id, -10), Leg(book.card.id, 10)],
                code="spend",
            )
            # The master debit: the random shard, then (if empty) the funded one; the credit.
            assert len(updates) <= 3
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    assert await available(session, book, book.master) == 900


async def test_a_transfer_and_its_entries_are_written_together(session: AsyncSession) -> None:
    """One statement on PostgreSQL (one for each table elsewhere), the entries in leg order."""
    book = await open_book(session)
    await fund(session, book, book.master, 10_000)
    inserts: list[str] = []

    def count(*args: object) -> None:
        if "INSERT INTO ledger_" in str(args[2]):
            inserts.append(str(args[2]))

    event.listen(Engine, "before_cursor_execute", count)
    try:
        result = await ledger.post_transfer(
            session,
            company_id=book.company_id,
            legs=[Leg(book.master.id, -1_000), Leg(book.card.id, 990), Leg(book.fees.id, 10)],
            code="card.topup",
        )
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    assert len(inserts) == (1 if backend() == "postgresql" else 2)
    written = await repository.entries_of(session, transfer_id=result.transfer_id)
    assert written == list(result.entries)
    report = await verify(session)
    assert report.ok, report.summary()


async def test_database_refuses_a_negative_shard_even_if_code_forgets(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    with pytest.raises(Exception, match=r"(?i)check|constraint"):
        await session.execute(
            update(LedgerBalance).where(LedgerBalance.account_id == book.card.id).values(posted=-1)
        )


async def test_verify_passes_on_a_consistent_ledger(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.master, 5_000)
    pending = await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.master.id, -1_000), Leg(book.card.id, 1_000)],
        code="card.topup",
        expires_at=None,
    )
    await ledger.post_pending(
        session,
        company_id=book.company_id,
        pending_id=pending.transfer_id,
        legs=[Leg(book.master.id, -500), Leg(book.card.id, 500)],
    )
    report = await verify(session)
    assert report.ok, report.summary()
    assert report.posted_totals.get("USD") == 0


async def test_verify_reports_a_balance_that_differs_from_its_entries(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    await session.execute(
        update(LedgerBalance).where(LedgerBalance.account_id == book.card.id).values(posted=999)
    )
    report = await verify(session)
    assert not report.ok
    assert any(f"account {book.card.id}" in p for p in report.problems)


async def test_verify_reports_an_unbalanced_transfer(session: AsyncSession) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    entry_id = (
        await session.execute(
            select(func.max(LedgerEntry.id)).where(LedgerEntry.account_id == book.card.id)
        )
    ).scalar_one()
    await session.execute(update(LedgerEntry).where(LedgerEntry.id == entry_id).values(amount=900))
    report = await verify(session)
    assert any("does not balance" in p for p in report.problems)


async def test_failed_transfer_leaves_no_balance_change_even_when_caught(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    before = await available(session, book, book.settlement)
    with pytest.raises(ledger.InsufficientFunds):
        # The settlement credit sorts before the master debit, so it is applied first.
        await ledger.post_transfer(
            session,
            company_id=book.company_id,
            legs=[Leg(book.master.id, -1), Leg(book.settlement.id, 1)],
            code="nothing",
        )
    assert await available(session, book, book.settlement) == before
    assert (await verify(session)).ok


async def test_locked_shards_show_what_changed_since_they_were_last_loaded(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    earlier = await repository.lock_shards(session, account_id=book.master.id)
    await fund(session, book, book.master, 700)
    now = await repository.lock_shards(session, account_id=book.master.id)
    assert sum(row.posted for row in now) == 700
    assert earlier  # still referenced: the session's identity map holds these rows


async def _fill_to_the_limit(session: AsyncSession, book: Book, account: LedgerAccount) -> None:
    """Credit `account` with `MAX_BALANCE` from the settlement account, in postings each
    shard of the settlement account can take."""
    share = MAX_BALANCE // book.settlement.shard_count
    for _ in range(book.settlement.shard_count):
        await fund(session, book, account, share)


async def test_a_credit_beyond_the_balance_limit_is_refused_and_changes_nothing(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    await _fill_to_the_limit(session, book, book.card)
    assert await available(session, book, book.card) == MAX_BALANCE
    with pytest.raises(ledger.BalanceLimitExceeded):
        await fund(session, book, book.card, 1)
    assert await available(session, book, book.card) == MAX_BALANCE
    assert await available(session, book, book.settlement) == -MAX_BALANCE


async def test_announced_credits_count_toward_the_balance_limit(session: AsyncSession) -> None:
    book = await open_book(session)
    await _fill_to_the_limit(session, book, book.card)
    await ledger.post_transfer(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -100), Leg(book.master.id, 100)],
        code="sweep",
    )
    await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.master.id, -100), Leg(book.card.id, 100)],
        code="refill",
        expires_at=None,
    )
    # Posting that reservation would reach the limit exactly: nothing more may be announced.
    with pytest.raises(ledger.BalanceLimitExceeded):
        await ledger.create_pending(
            session,
            company_id=book.company_id,
            legs=[Leg(book.settlement.id, -1), Leg(book.card.id, 1)],
            code="refill",
            expires_at=None,
        )
    balance = await ledger.balance(session, company_id=book.company_id, account_id=book.card.id)
    assert (balance.posted, balance.pending_credits) == (MAX_BALANCE - 100, 100)


async def test_an_account_that_may_go_negative_owes_at_most_the_balance_limit(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    await _fill_to_the_limit(session, book, book.card)
    assert await available(session, book, book.settlement) == -MAX_BALANCE
    with pytest.raises(ledger.BalanceLimitExceeded):
        await fund(session, book, book.fees, 1)
    assert await available(session, book, book.settlement) == -MAX_BALANCE
    assert await available(session, book, book.fees) == 0


async def test_company_accounts_read_with_accounts_by_id_stay_the_company_s(
    session: AsyncSession,
) -> None:
    mine, theirs = await open_book(session, "Mine Ltd"), await open_book(session, "Theirs Ltd")
    by_kind, by_id = await ledger.company_accounts_and(
        session,
        company_id=mine.company_id,
        kinds=(ledger.CompanyAccount.MASTER, ledger.CompanyAccount.FEE_REVENUE),
        currency="USD",
        account_ids=[mine.card.id, theirs.card.id, theirs.master.id],
    )
    assert by_kind == {
        ledger.CompanyAccount.MASTER: mine.master,
        ledger.CompanyAccount.FEE_REVENUE: mine.fees,
    }
    assert by_id == {mine.card.id: mine.card}


async def settlement_sides(
    session: AsyncSession, company_id: int, account_id: int, currency: str = "USD"
) -> tuple[PostingAccount, PostingAccount] | None:
    """An account read as values with the company's settlement account in `currency`."""
    return await ledger.account_and_company_account(
        session,
        company_id=company_id,
        account_id=account_id,
        kind=ledger.CompanyAccount.SETTLEMENT,
        currency=currency,
    )


async def test_an_account_read_as_values_comes_with_the_company_account(
    session: AsyncSession,
) -> None:
    mine = await open_book(session, "Mine Ltd")
    await open_book(session, "Theirs Ltd")
    found = await settlement_sides(session, mine.company_id, mine.card.id)
    assert found is not None
    account, settlement = found
    assert (account.id, account.company_id, account.currency) == (
        mine.card.id,
        mine.company_id,
        "USD",
    )
    assert (account.allow_negative, account.shard_count) == (
        mine.card.allow_negative,
        mine.card.shard_count,
    )
    assert (settlement.id, settlement.shard_count) == (
        mine.settlement.id,
        mine.settlement.shard_count,
    )


async def test_another_company_s_account_is_not_read_as_values(session: AsyncSession) -> None:
    mine, theirs = await open_book(session, "Mine Ltd"), await open_book(session, "Theirs Ltd")
    found = await settlement_sides(session, mine.company_id, theirs.card.id)
    assert found is None


async def test_the_company_account_read_with_an_account_is_opened_on_first_use(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    euros = await ledger.account(
        session,
        company_id=book.company_id,
        code="card_account",
        owner_type="card",
        owner_id="euro-card",
        currency="EUR",
        allow_negative=True,
    )
    found = await settlement_sides(session, book.company_id, euros.id, "EUR")
    assert found is not None
    _, settlement = found
    opened = await ledger.find_company_account(
        session, company_id=book.company_id, kind=ledger.CompanyAccount.SETTLEMENT, currency="EUR"
    )
    assert opened is not None
    assert settlement.id == opened.id


async def test_a_hold_on_accounts_read_as_values_posts_as_on_entities(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    found = await settlement_sides(session, book.company_id, book.card.id)
    assert found is not None
    account, settlement = found
    settled_before = await available(session, book, book.settlement)
    hold = await ledger.reserve(
        session,
        company_id=book.company_id,
        legs=[Leg(account.id, -400), Leg(settlement.id, 400)],
        code="card.purchase",
        expires_at=None,
        accounts=(account, settlement),
    )
    await ledger.post_pending(
        session,
        company_id=book.company_id,
        pending_id=hold.result.transfer_id,
        reservation=hold,
    )
    assert await available(session, book, book.card) == 600
    assert await available(session, book, book.settlement) == settled_before + 400


async def test_an_account_s_balance_is_read_in_the_statement_that_finds_it(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    await ledger.create_pending(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -300), Leg(book.settlement.id, 300)],
        code="card.authorization",
        expires_at=None,
    )
    read = await ledger.balance(session, company_id=book.company_id, account_id=book.card.id)
    assert read == await ledger.balance_of(session, book.card)
    assert (read.currency, read.posted, read.pending_debits, read.available) == (
        "USD",
        1_000,
        300,
        700,
    )


async def test_an_account_without_balance_rows_reads_as_zero(session: AsyncSession) -> None:
    book = await open_book(session)
    read = await ledger.balance(session, company_id=book.company_id, account_id=book.fees.id)
    assert (read.posted, read.pending_debits, read.pending_credits) == (0, 0, 0)


async def test_another_company_s_account_has_no_balance_for_a_company(
    session: AsyncSession,
) -> None:
    mine, theirs = await open_book(session, "Mine Ltd"), await open_book(session, "Theirs Ltd")
    await fund(session, theirs, theirs.card, 1_000)
    with pytest.raises(ledger.AccountNotFound):
        await ledger.balance(session, company_id=mine.company_id, account_id=theirs.card.id)


async def test_a_reservation_settles_from_what_it_holds_without_reading_it_again(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    await fund(session, book, book.card, 1_000)
    reservation = await ledger.reserve(
        session,
        company_id=book.company_id,
        legs=[Leg(book.card.id, -400), Leg(book.master.id, 400)],
        code="banking.budget_transfer",
        expires_at=None,
    )
    assert {a.id for a in reservation.accounts} == {book.card.id, book.master.id}
    reads: list[str] = []

    def count(*args: object) -> None:
        if str(args[2]).lstrip().upper().startswith("SELECT"):
            reads.append(str(args[2]))

    event.listen(Engine, "before_cursor_execute", count)
    try:
        await ledger.post_pending(
            session,
            company_id=book.company_id,
            pending_id=reservation.result.transfer_id,
            reservation=reservation,
        )
    finally:
        event.remove(Engine, "before_cursor_execute", count)
    assert reads == []
    assert await available(session, book, book.card) == 600
    assert await available(session, book, book.master) == 400


async def test_balances_by_id_are_the_company_s_accounts_only(session: AsyncSession) -> None:
    mine, theirs = await open_book(session, "Mine Ltd"), await open_book(session, "Theirs Ltd")
    await fund(session, mine, mine.card, 1_000)
    await fund(session, mine, mine.usdc_card, 2_000)
    await fund(session, theirs, theirs.card, 5_000)
    found = await ledger.balances_by_id(
        session,
        company_id=mine.company_id,
        account_ids=[mine.card.id, mine.usdc_card.id, mine.fees.id, theirs.card.id],
    )
    assert set(found) == {mine.card.id, mine.usdc_card.id, mine.fees.id}
    assert found[mine.card.id] == await ledger.balance_of(session, mine.card)
    assert (found[mine.usdc_card.id].currency, found[mine.usdc_card.id].posted) == ("USDC", 2_000)
    assert found[mine.fees.id].posted == 0


async def _card_account(
    session: AsyncSession,
    book: Book,
    owner_id: str,
    *,
    shard_count: int = 1,
    new_owner: bool = False,
) -> LedgerAccount:
    return await ledger.account(
        session,
        company_id=book.company_id,
        code="card",
        owner_type="card",
        owner_id=owner_id,
        currency="USD",
        shard_count=shard_count,
        new_owner=new_owner,
    )


async def test_an_accounts_first_use_creates_it_with_its_shards_at_zero(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    created = await _card_account(session, book, "new", shard_count=3, new_owner=True)
    again = await _card_account(session, book, "new")
    assert again.id == created.id
    shards = await session.scalars(
        select(LedgerBalance.posted).where(LedgerBalance.account_id == created.id)
    )
    assert list(shards) == [0, 0, 0]


async def test_an_account_said_new_that_exists_is_found_not_created_twice(
    session: AsyncSession,
) -> None:
    book = await open_book(session)
    found = await _card_account(session, book, "1", new_owner=True)
    assert found.id == book.card.id
    count = await session.scalar(
        select(func.count()).where(LedgerBalance.account_id == book.card.id)
    )
    assert count == 1
