"""All SQL of card transactions."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import BigInteger, String, Table, bindparam, exists, insert, select, true, update
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.authorization.models import AuthorizationRule
from finplat.cards.funding.auto_topup import LOW_BALANCE
from finplat.cards.funding.models import CardAutoTopup
from finplat.cards.models import Card
from finplat.cards.transactions.models import CardTransaction, CardTransactionEvent
from finplat.cards.transactions.purchase_card import PurchaseCard
from finplat.db import driver_statements
from finplat.db.repository import COMPANY_PARAM, CompanyRepository, locked, of_company
from finplat.ledger.core import AccountTerms
from finplat.ledger.models import LedgerAccount
from finplat.ledger.service import CompanyAccount, company_key
from finplat.partner_hosted.models import PartnerHostedConfig


class CardTransactionRepository(CompanyRepository[CardTransaction]):
    model = CardTransaction

    async def by_authorization(
        self, provider: str, authorization_id: str
    ) -> CardTransaction | None:
        stmt = self.scoped().where(
            CardTransaction.provider == provider,
            CardTransaction.authorization_id == authorization_id,
        )
        return (await self.session.execute(stmt)).scalar_one_or_none()

    async def with_card(self, txn_id: int) -> tuple[CardTransaction, Card] | None:
        """The purchase and its card, both read afresh, in one statement."""
        found = await self.session.execute(_WITH_CARD, self.bound(txn_id=txn_id))
        row = found.one_or_none()
        return None if row is None else (row[0], row[1])

    async def add_new(self, values: dict[str, Any]) -> CardTransaction | None:
        """The purchase inserted, or None when its provider's authorization id has one already:
        one statement, the unique key deciding (a read first cost a second)."""
        return await self.create_unless_taken(values)

    async def add_event(self, values: dict[str, Any]) -> None:
        """A purchase's event recorded (its provider event id unique in the company)."""
        connection = await driver_statements.connection_of(self.session)
        values = {**values, "company_id": self.company_id}
        await driver_statements.execute(connection, _INSERT_EVENT, values)

    async def for_event(
        self, provider: str, authorization_id: str, provider_event_id: str
    ) -> tuple[CardTransaction | None, bool]:
        """The purchase a provider event names, and whether that event is already recorded:
        one read when the purchase exists (every event but a purchase's first)."""
        params = self.bound(
            provider=provider, authorization_id=authorization_id, event_id=provider_event_id
        )
        row = (await self.session.execute(_FOR_EVENT, params)).one_or_none()
        if row is None:
            return None, await self.has_event(provider, provider_event_id)
        return row[0], bool(row[1])

    async def page(
        self,
        *,
        card_id: int | None,
        user_id: int | None,
        statuses: list[str],
        offset: int,
        limit: int,
    ) -> list[CardTransaction]:
        stmt = self.scoped()
        if card_id is not None:
            stmt = stmt.where(CardTransaction.card_id == card_id)
        if user_id is not None:
            stmt = stmt.where(CardTransaction.user_id == user_id)
        if statuses:
            stmt = stmt.where(CardTransaction.status.in_(statuses))
        stmt = stmt.order_by(CardTransaction.id.desc()).offset(offset).limit(limit)
        return list((await self.session.execute(stmt)).scalars())

    async def events_of(self, transaction_ids: list[int]) -> list[CardTransactionEvent]:
        if not transaction_ids:
            return []
        stmt = (
            select(CardTransactionEvent)
            .where(
                CardTransactionEvent.company_id == self.company_id,
                CardTransactionEvent.card_transaction_id.in_(transaction_ids),
            )
            .order_by(CardTransactionEvent.id)
        )
        return list((await self.session.execute(stmt)).scalars())

    async def has_event(self, provider: str, provider_event_id: str) -> bool:
        params = self.bound(provider=provider, event_id=provider_event_id)
        return (await self.session.execute(_HAS_EVENT, params)).first() is not None

    async def follow_up_done(self, txn_id: int) -> None:
        """The purchase's follow-up ran: it is due no more."""
        await self._follow_up_at(txn_id, None)

    async def follow_up_later(self, txn_id: int, *, at: datetime) -> None:
        """The purchase's follow-up is due again `at`, if it is still due."""
        await self._follow_up_at(txn_id, at, still_due=True)

    async def _follow_up_at(
        self, txn_id: int, at: datetime | None, *, still_due: bool = False
    ) -> None:
        stmt = (
            update(CardTransaction)
            .where(CardTransaction.company_id == self.company_id, CardTransaction.id == txn_id)
            .values(follow_up_at=at)
            .execution_options(synchronize_session=False)
        )
        if still_due:
            stmt = stmt.where(CardTransaction.follow_up_at.is_not(None))
        await self.session.execute(stmt)


async def card_to_decide(
    session: AsyncSession, *, company_id: int, provider: str, provider_card_id: str
) -> tuple[PurchaseCard, bool, bool] | None:
    """The card a provider's real-time request names, locked, as values with its purchase's
    two sides, and whether its company hosts its balances at a partner and whether it has an
    active authorization rule."""
    connection = await driver_statements.connection_of(session)
    settlement_key = company_key(company_id, CompanyAccount.SETTLEMENT)
    params = {
        "company_id": company_id,
        "settlement_code": settlement_key.code,
        "settlement_owner_type": settlement_key.owner_type,
        "settlement_owner_id": settlement_key.owner_id,
        "provider": provider,
        "provider_card_id": provider_card_id,
    }
    rows = await driver_statements.returning(connection, _PURCHASE_CARD, params)
    if not rows:
        return None
    row = rows[0]
    account = settlement = None
    if row.account_shards is not None:
        account = AccountTerms(
            row.ledger_account_id,
            company_id,
            row.currency,
            row.account_negative,
            row.account_shards,
        )
    if row.settlement_id is not None:
        settlement = AccountTerms(
            row.settlement_id,
            company_id,
            row.currency,
            row.settlement_negative,
            row.settlement_shards,
        )
    card = PurchaseCard(
        row.id,
        company_id,
        row.user_id,
        row.provider,
        row.currency,
        row.status,
        row.ledger_account_id,
        account,
        settlement,
    )
    return card, bool(row.partner_hosted), bool(row.rules)


async def user_card_to_decide(
    session: AsyncSession, *, company_id: int, card_id: int, user_id: int
) -> tuple[Card, bool, bool] | None:
    """The user's card a sandbox purchase names, as `card_to_decide`."""
    params = {"card_id": card_id, "user_id": user_id}
    return await _card_and_configured(session, _USER_CARD_TO_DECIDE, company_id, params)


async def _card_and_configured(
    session: AsyncSession, stmt: Any, company_id: int, params: dict[str, Any]
) -> tuple[Card, bool, bool] | None:
    row = (await session.execute(stmt, {COMPANY_PARAM: company_id, **params})).one_or_none()
    return None if row is None else (row[0], bool(row[1]), bool(row[2]))


async def holds_authorized_before(
    session: AsyncSession, *, before: datetime, limit: int
) -> list[tuple[int, int]]:
    """`(company_id, card_transaction_id)` of purchases still holding money that were
    authorized before `before`, every company's (the expiry job's query), oldest first."""
    stmt = (
        select(CardTransaction.company_id, CardTransaction.id)
        .where(CardTransaction.held_minor > 0, CardTransaction.authorized_at < before)
        .order_by(CardTransaction.id)
        .limit(limit)
    )
    return [(company_id, txn_id) for company_id, txn_id in await session.execute(stmt)]


async def follow_ups_due(
    session: AsyncSession, *, now: datetime, limit: int
) -> list[tuple[int, int]]:
    """`(company_id, card_transaction_id)` of purchases whose follow-up (decline fee, auto
    top-up) is due, every company's (the follow-up job's query), oldest first."""
    stmt = (
        select(CardTransaction.company_id, CardTransaction.id)
        .where(CardTransaction.follow_up_at <= now)
        .order_by(CardTransaction.follow_up_at, CardTransaction.id)
        .limit(limit)
    )
    return [(company_id, txn_id) for company_id, txn_id in await session.execute(stmt)]


async def clear_follow_ups_with_nothing_to_do(session: AsyncSession, *, now: datetime) -> None:
    """Clear, every company's at once, the due follow-ups of approvals whose card has no enabled
    low-balance auto top-up: an approval's only follow-up is that top-up, so most approvals
    need no round of their own."""
    txns, topups = cast(Table, CardTransaction.__table__), cast(Table, CardAutoTopup.__table__)
    low_balance_rule = exists().where(
        topups.c.company_id == txns.c.company_id,
        topups.c.card_id == txns.c.card_id,
        topups.c.rule == LOW_BALANCE,
        topups.c.enabled.is_(True),
    )
    stmt = (
        update(txns)
        .where(txns.c.follow_up_at <= now, txns.c.declined.is_(False), ~low_balance_rule)
        .values(follow_up_at=None)
    )
    await session.execute(stmt)


# Every provider event of a purchase runs them: built once, values bound at execution.
_EVENT_NAMED = (
    CardTransactionEvent.company_id == bindparam(COMPANY_PARAM),
    CardTransactionEvent.provider == bindparam("provider"),
    CardTransactionEvent.provider_event_id == bindparam("event_id"),
)
_FOR_EVENT = of_company(
    CardTransaction,
    CardTransaction.provider == bindparam("provider"),
    CardTransaction.authorization_id == bindparam("authorization_id"),
).add_columns(exists().where(*_EVENT_NAMED))
_HAS_EVENT = select(CardTransactionEvent.id).where(*_EVENT_NAMED)
# What a sandbox purchase's answer shows once its callback has moved the purchase (and an
# auto-lock the card) in a transaction of its own.
_WITH_CARD = (
    of_company(CardTransaction, CardTransaction.id == bindparam("txn_id"))
    .add_columns(Card)
    .join(Card, Card.id == CardTransaction.card_id)
    .execution_options(populate_existing=True)
)

# An event recorded: an INSERT into the table (the ORM's flush of a new object costs nearly
# three times the statement, docs/performance.md; nothing reads the object back).
_INSERT_EVENT = insert(cast(Table, CardTransactionEvent.__table__))
# Both facts nearly always answer no, and asked in the card's own statement they cost no
# round trip of their own (the decision's budget is the card network's).
_CONFIGURED = (
    exists().where(PartnerHostedConfig.company_id == Card.company_id),
    exists().where(
        AuthorizationRule.company_id == Card.company_id, AuthorizationRule.active == true()
    ),
)
# The provider's real-time request: the card's values over its table (`PurchaseCard`), run
# below SQLAlchemy's execution (`db.driver_statements`), with the same two facts and the terms
# of the purchase's two sides (the card's account, the company's settlement account in the
# card's currency): they never change, so reading them under the card's lock is as good as
# after it. The card's balance is not read here: in one statement with the lock, a decision
# that waited for the lock would see the balance as it was before the one it waited for.
_cards = cast(Table, Card.__table__)
_card_account = cast(Table, LedgerAccount.__table__).alias("card_account")
_settlement = cast(Table, LedgerAccount.__table__).alias("settlement")
_PURCHASE_CARD = (
    select(
        _cards.c.id,
        _cards.c.user_id,
        _cards.c.provider,
        _cards.c.currency,
        _cards.c.status,
        _cards.c.ledger_account_id,
        _card_account.c.allow_negative.label("account_negative"),
        _card_account.c.shard_count.label("account_shards"),
        _settlement.c.id.label("settlement_id"),
        _settlement.c.allow_negative.label("settlement_negative"),
        _settlement.c.shard_count.label("settlement_shards"),
        exists()
        .where(PartnerHostedConfig.company_id == _cards.c.company_id)
        .label("partner_hosted"),
        exists()
        .where(
            AuthorizationRule.company_id == _cards.c.company_id,
            AuthorizationRule.active == true(),
        )
        .label("rules"),
    )
    .select_from(
        _cards.outerjoin(
            _card_account,
            (_card_account.c.id == _cards.c.ledger_account_id)
            & (_card_account.c.company_id == _cards.c.company_id)
            & (_card_account.c.currency == _cards.c.currency),
        ).outerjoin(
            _settlement,
            (_settlement.c.company_id == _cards.c.company_id)
            & (_settlement.c.code == bindparam("settlement_code", type_=String))
            & (_settlement.c.owner_type == bindparam("settlement_owner_type", type_=String))
            & (_settlement.c.owner_id == bindparam("settlement_owner_id", type_=String))
            & (_settlement.c.currency == _cards.c.currency),
        )
    )
    .where(
        _cards.c.company_id == bindparam("company_id", type_=BigInteger),
        _cards.c.provider == bindparam("provider", type_=String),
        _cards.c.provider_card_id == bindparam("provider_card_id", type_=String),
    )
    .with_for_update(of=_cards)
)
_USER_CARD_TO_DECIDE = locked(
    of_company(Card, Card.id == bindparam("card_id"), Card.user_id == bindparam("user_id"))
).add_columns(*_CONFIGURED)
