"""The sandbox card provider's statements of a load, an unload or a purchase, built once.

Every top-up and unload runs the first ones, every sandbox purchase `SPEND`. Built per call,
their comparisons and SET clauses cost the server more than running them
(docs/performance-log.md, 2026-11-27 night); built once, each execution only binds its values.
Parameter names carry a prefix (`m_`, `a_`): SQLAlchemy keeps a column's own name for its SET
clause.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table, bindparam, insert, update

from finplat.db.dialect import inserts_ignoring_conflicts
from finplat.providers.cards.port import ProviderCardStatus
from finplat.providers.cards.sandbox.models import (
    SandboxCardprovCard,
    SandboxCardprovMovement,
    SandboxCardprovTransaction,
)

_MOVEMENTS = cast(Table, SandboxCardprovMovement.__table__)
_CARD_TABLE = cast(Table, SandboxCardprovCard.__table__)
_CARDS = _CARD_TABLE.c
_CANNOT_MOVE = (ProviderCardStatus.CANCELLED.value, ProviderCardStatus.PENDING.value)

# The movement, keyed by the caller's idempotency key: no row when the key has moved money
# already. The columns come from the execution's values.
INSERT = inserts_ignoring_conflicts(_MOVEMENTS)

# The card's balance moved by `m_amount` (signed) when the card can move money and keeps a
# balance of at least zero; its row lock serialises movements on the card. On the table, not
# the mapped class: the ORM annotates a copy of an UPDATE of a mapped class at every
# execution, which SQLAlchemy then keys for its compiled cache again.
MOVE_CARD = (
    update(_CARD_TABLE)
    .where(
        _CARDS.card_id == bindparam("m_card_id"),
        _CARDS.company_id == bindparam("m_company_id"),
        _CARDS.provider == bindparam("m_provider"),
        _CARDS.hidden.is_(False),
        _CARDS.status.not_in(_CANNOT_MOVE),
        _CARDS.balance_minor + bindparam("m_amount") >= 0,
    )
    .values(
        balance_minor=_CARDS.balance_minor + bindparam("m_amount"),
        updated_at=bindparam("m_now"),
    )
    .returning(_CARDS.company_id, _CARDS.card_id, _CARDS.currency, _CARDS.balance_minor)
)

# The card's balance after the movement, kept with it for a replay's answer.
SET_BALANCE = (
    update(_MOVEMENTS)
    .where(_MOVEMENTS.c.movement_id == bindparam("m_movement_id"))
    .values(balance_minor=bindparam("m_balance"))
)

# A purchase the card's balance covers, taken from it. The caller's copy of the row is not
# brought up to date (nothing reads it afterwards). Auto-lock: an approved purchase locks the
# card.
SPEND = (
    update(_CARD_TABLE)
    .where(_CARDS.id == bindparam("a_row_id"), _CARDS.balance_minor >= bindparam("a_amount"))
    .values(balance_minor=_CARDS.balance_minor - bindparam("a_amount"), locked=_CARDS.auto_lock)
    .returning(_CARDS.balance_minor)
)

# A transaction on the card's statement (a load, an unload, a purchase), an INSERT into the
# table: every money movement writes one, and the ORM's flush of a new object costs nearly
# three times the statement (docs/performance.md).
RECORD_TRANSACTION = insert(cast(Table, SandboxCardprovTransaction.__table__))
