"""cardprov to bankprov quotes

A card-provider quote of the opposite direction (`CARDPROV_TO_BANKPROV`) keeps the USD it
unloads from the card and the unload fee it priced, so the transfer runs at the quote's terms
and a failed conversion puts exactly that back on the card.

Revision ID: 0032
Revises: 0031
Create Date: 2026-11-27 01:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("crypto_cardprov_quotes") as batch:
        batch.add_column(sa.Column("card_amount_minor", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("card_fee_minor", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("crypto_cardprov_quotes") as batch:
        batch.drop_column("card_fee_minor")
        batch.drop_column("card_amount_minor")
