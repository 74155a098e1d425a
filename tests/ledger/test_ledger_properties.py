"""Stateful property test: random transfers, pendings, posts, voids and expiries over several
companies and currencies never break conservation, balance = sum of entries, or the
negative-balance rule, and every outcome matches a simple in-memory model of the ledger."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    invariant,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from finplat.config import Settings
from finplat.db.engine import create_engine
from finplat.kit.clock import reset_clock, set_clock
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.verification import verify
from tests.ledger.accounts import Book, open_book

T = TypeVar("T")
START = datetime(2032, 6, 1, tzinfo=UTC)


@dataclass
class Model:
    """Expected balances: posted and pending debits/credits per account id."""

    posted: dict[int, int] = field(default_factory=dict)
    pending_debits: dict[int, int] = field(default_factory=dict)
    pending_credits: dict[int, int] = field(default_factory=dict)
    negative_ok: dict[int, bool] = field(default_factory=dict)

    def available(self, account: int) -> int:
        return self.posted.get(account, 0) - self.pending_debits.get(account, 0)

    def add(self, table: dict[int, int], account: int, amount: int) -> None:
        table[account] = table.get(account, 0) + amount


@dataclass
class Pending:
    company_id: int
    transfer_id: int
    debit: int
    credit: int
    amount: int
    expires_at: datetime


class LedgerMachine(RuleBasedStateMachine):
    database_url: str = ""
    pendings = Bundle("pendings")

    def __init__(self) -> None:
        super().__init__()
        self.loop = asyncio.new_event_loop()
        self.now = START
        set_clock(lambda: self.now)
        self.engine: AsyncEngine = create_engine(Settings(database_url=self.database_url))
        self.connection: AsyncConnection = self.run(self.engine.connect().start())
        self.run(self.connection.begin().start())
        factory = async_sessionmaker(
            bind=self.connection,
            expire_on_commit=False,
            join_transaction_mode="create_savepoint",
        )
        self.session: AsyncSession = factory()
        self.model = Model()
        self.live: dict[int, Pending] = {}
        self.books: list[Book] = [self.run(open_book(self.session, f"P{i}")) for i in range(2)]
        self.accounts: list[tuple[int, int, str]] = []  # (company, account, currency)
        for book in self.books:
            for account in (
                book.settlement,
                book.master,
                book.card,
                book.fees,
                book.usdc_settlement,
                book.usdc_card,
            ):
                self.accounts.append((book.company_id, account.id, account.currency))
                self.model.negative_ok[account.id] = account.allow_negative

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self.loop.run_until_complete(coro)

    def teardown(self) -> None:
        try:
            report = self.run(verify(self.session))
            assert report.ok, report.summary()
        finally:
            self.run(self.session.close())
            self.run(self.connection.rollback())
            self.run(self.connection.close())
            self.run(self.engine.dispose())
            self.loop.close()
            reset_clock()

    def pair(self, data: st.DataObject) -> tuple[int, int, int]:
        company, debit, currency = data.draw(st.sampled_from(self.accounts))
        credits = [
            a for c, a, cur in self.accounts if c == company and cur == currency and a != debit
        ]
        return company, debit, data.draw(st.sampled_from(credits))

    @rule(data=st.data(), amount=st.integers(min_value=1, max_value=5_000))
    def transfer(self, data: st.DataObject, amount: int) -> None:
        company, debit, credit = self.pair(data)
        expected_ok = self.model.negative_ok[debit] or self.model.available(debit) >= amount
        try:
            self.run(
                ledger.post_transfer(
                    self.session,
                    company_id=company,
                    legs=[Leg(debit, -amount), Leg(credit, amount)],
                    code="prop.transfer",
                )
            )
        except ledger.InsufficientFunds:
            assert not expected_ok
            return
        assert expected_ok
        self.model.add(self.model.posted, debit, -amount)
        self.model.add(self.model.posted, credit, amount)

    @rule(
        target=pendings,
        data=st.data(),
        amount=st.integers(min_value=1, max_value=5_000),
        lifetime=st.integers(min_value=1, max_value=120),
    )
    def reserve(self, data: st.DataObject, amount: int, lifetime: int) -> Pending | None:
        company, debit, credit = self.pair(data)
        expected_ok = self.model.negative_ok[debit] or self.model.available(debit) >= amount
        expires_at = self.now + timedelta(minutes=lifetime)
        try:
            result = self.run(
                ledger.create_pending(
                    self.session,
                    company_id=company,
                    legs=[Leg(debit, -amount), Leg(credit, amount)],
                    code="prop.pending",
                    expires_at=expires_at,
                )
            )
        except ledger.InsufficientFunds:
            assert not expected_ok
            return None
        assert expected_ok
        self.model.add(self.model.pending_debits, debit, amount)
        self.model.add(self.model.pending_credits, credit, amount)
        pending = Pending(company, result.transfer_id, debit, credit, amount, expires_at)
        self.live[pending.transfer_id] = pending
        return pending

    def release(self, pending: Pending) -> None:
        del self.live[pending.transfer_id]
        self.model.add(self.model.pending_debits, pending.debit, -pending.amount)
        self.model.add(self.model.pending_credits, pending.credit, -pending.amount)

    @rule(pending=consumes(pendings), data=st.data())
    def post(self, pending: Pending | None, data: st.DataObject) -> None:
        if pending is None:
            return
        part = data.draw(st.integers(min_value=1, max_value=pending.amount))
        try:
            self.run(
                ledger.post_pending(
                    self.session,
                    company_id=pending.company_id,
                    pending_id=pending.transfer_id,
                    legs=[Leg(pending.debit, -part), Leg(pending.credit, part)],
                )
            )
        except (ledger.TransferExpired, ledger.TransferAlreadyResolved):
            # Past its expiry: refused; the expiry job releases it (or already did).
            assert self.now >= pending.expires_at
            return
        assert self.now < pending.expires_at
        self.release(pending)
        self.model.add(self.model.posted, pending.debit, -part)
        self.model.add(self.model.posted, pending.credit, part)

    @rule(pending=consumes(pendings))
    def void(self, pending: Pending | None) -> None:
        if pending is None:
            return
        try:
            self.run(
                ledger.void_pending(
                    self.session, company_id=pending.company_id, pending_id=pending.transfer_id
                )
            )
        except ledger.TransferAlreadyResolved:
            assert pending.transfer_id not in self.live  # the expiry job got there first
            return
        self.release(pending)

    @rule(minutes=st.integers(min_value=1, max_value=90))
    def time_passes_and_expiry_runs(self, minutes: int) -> None:
        self.now += timedelta(minutes=minutes)
        self.run(ledger.expire_due(self.session))
        for pending in list(self.live.values()):
            if pending.expires_at <= self.now:
                self.release(pending)

    @invariant()
    def balances_match_the_model(self) -> None:
        for company, account, _ in self.accounts:
            balance = self.run(ledger.balance(self.session, company_id=company, account_id=account))
            assert balance.posted == self.model.posted.get(account, 0)
            assert balance.pending_debits == self.model.pending_debits.get(account, 0)
            assert balance.pending_credits == self.model.pending_credits.get(account, 0)
            if not self.model.negative_ok[account]:
                assert balance.available >= 0

    @invariant()
    def money_is_conserved(self) -> None:
        totals: dict[str, int] = {}
        for _, account, currency in self.accounts:
            totals[currency] = totals.get(currency, 0) + self.model.posted.get(account, 0)
        assert all(total == 0 for total in totals.values())


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_random_ledger_operations_keep_every_invariant(database_url: str) -> None:
    LedgerMachine.database_url = database_url
    run_state_machine_as_test(
        LedgerMachine,
        settings=settings(
            max_examples=15,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        ),
    )
