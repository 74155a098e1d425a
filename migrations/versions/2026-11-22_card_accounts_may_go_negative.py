"""card accounts may go negative

A card's ledger account records the purchases its provider approved whatever the ledger's
available balance (money reserved for an unload on its way is still on the card at the
provider); the platform's own withdrawals keep requiring the available balance.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-22 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ACCOUNTS = sa.table(
    "ledger_accounts",
    sa.column("id", sa.BigInteger),
    sa.column("code", sa.String),
    sa.column("owner_type", sa.String),
    sa.column("allow_negative", sa.Boolean),
)
_BALANCES = sa.table(
    "ledger_balances",
    sa.column("account_id", sa.BigInteger),
    sa.column("floor", sa.BigInteger),
)


def _card_accounts_may_go_negative(allowed: bool) -> None:
    """The account's rule (checked by `finplat ledger verify`) and its balance shards' floor
    (checked by the database): no floor for an account that may go negative."""
    cards = sa.and_(_ACCOUNTS.c.code == "card", _ACCOUNTS.c.owner_type == "card")
    op.execute(_ACCOUNTS.update().where(cards).values(allow_negative=allowed))
    card_accounts = sa.select(_ACCOUNTS.c.id).where(cards)
    op.execute(
        _BALANCES.update()
        .where(_BALANCES.c.account_id.in_(card_accounts))
        .values(floor=None if allowed else 0)
    )


def upgrade() -> None:
    _card_accounts_may_go_negative(True)


def downgrade() -> None:
    _card_accounts_may_go_negative(False)
