"""sealed webhook secrets

Webhook secrets are stored sealed with `FINPLAT_SECRET_KEY` (`finplat.sealing`): the rows
written in plaintext before are sealed here, and opened again on downgrade. The sealed form is
longer than the secret, so the column widens to 255.

The keys are the ones the environment configures (`FINPLAT_SECRET_KEY`, and
`FINPLAT_SECRET_KEY_PREVIOUS` to open on downgrade), as `finplat migrate` and `finplat serve`
read them.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from finplat.config import get_settings
from finplat.sealing.keyring import SecretKeyring

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PURPOSE = "companies.webhook_secret"


def _keyring() -> SecretKeyring:
    return get_settings().secret_keyring()


def _rewrite(change: dict[str, str]) -> None:
    bind = op.get_bind()
    for company_id, value in change.items():
        bind.execute(
            sa.text("UPDATE companies SET webhook_secret = :value WHERE id = :id"),
            {"value": value, "id": int(company_id)},
        )


def _stored() -> dict[str, str]:
    rows = op.get_bind().execute(sa.text("SELECT id, webhook_secret FROM companies")).all()
    return {str(company_id): str(value) for company_id, value in rows}


def upgrade() -> None:
    with op.batch_alter_table("companies", schema=None) as batch_op:
        batch_op.alter_column(
            "webhook_secret",
            existing_type=sa.String(length=128),
            type_=sa.String(length=255),
            existing_nullable=False,
        )
    keyring = _keyring()
    _rewrite(
        {
            company_id: keyring.seal(value, purpose=PURPOSE)
            for company_id, value in _stored().items()
            if not keyring.is_sealed(value)
        }
    )


def downgrade() -> None:
    keyring = _keyring()
    _rewrite(
        {
            company_id: keyring.open(value, purpose=PURPOSE)
            for company_id, value in _stored().items()
            if keyring.is_sealed(value)
        }
    )
    with op.batch_alter_table("companies", schema=None) as batch_op:
        batch_op.alter_column(
            "webhook_secret",
            existing_type=sa.String(length=255),
            type_=sa.String(length=128),
            existing_nullable=False,
        )
