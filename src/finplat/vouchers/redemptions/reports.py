"""The redemption report for finance teams: every redemption in a period, as JSON or CSV.

A report answers every matching redemption or none: past `MAX_ROWS` it is 400
`REPORT_TOO_LARGE` (narrow `from`/`to`), never a silently cut list.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.errors import ValidationFailed
from finplat.kit.money import from_minor
from finplat.vouchers.models import Voucher
from finplat.vouchers.redemptions.models import VoucherRedemption

MAX_ROWS = 10_000
COLUMNS = (
    "RedemptionId",
    "VoucherId",
    "VoucherName",
    "UserId",
    "Amount",
    "Currency",
    "Status",
    "ErrorCode",
    "CreatedAt",
    "CompletedAt",
)


class ReportTooLarge(ValidationFailed):
    code = "REPORT_TOO_LARGE"
    message = f"More than {MAX_ROWS} redemptions match: narrow the period with from and to."


@dataclass(frozen=True)
class ReportRow:
    redemption_id: str
    voucher_id: str
    voucher_name: str
    user_id: int
    amount: Decimal
    currency: str
    status: str
    error_code: str | None
    created_at: datetime
    completed_at: datetime | None


async def redemptions(
    session: AsyncSession,
    *,
    company_id: int,
    created_from: datetime | None,
    created_to: datetime | None,
    status: str | None,
    currency: str | None,
) -> list[ReportRow]:
    """The company's redemptions created in [`created_from`, `created_to`), oldest first,
    optionally of one status and currency."""
    stmt = (
        select(VoucherRedemption, Voucher.name)
        .join(Voucher, Voucher.id == VoucherRedemption.voucher_id)
        .where(VoucherRedemption.company_id == company_id)
        .order_by(VoucherRedemption.created_at, VoucherRedemption.id)
        .limit(MAX_ROWS + 1)
    )
    if created_from is not None:
        stmt = stmt.where(VoucherRedemption.created_at >= created_from)
    if created_to is not None:
        stmt = stmt.where(VoucherRedemption.created_at < created_to)
    if status is not None:
        stmt = stmt.where(VoucherRedemption.status == status)
    if currency is not None:
        stmt = stmt.where(VoucherRedemption.currency == currency)
    rows = (await session.execute(stmt)).all()
    if len(rows) > MAX_ROWS:
        raise ReportTooLarge()
    return [
        ReportRow(
            redemption_id=r.id,
            voucher_id=r.voucher_id,
            voucher_name=name,
            user_id=r.user_id,
            amount=from_minor(r.amount_minor, r.currency),
            currency=r.currency,
            status=r.status,
            error_code=r.error_code,
            created_at=r.created_at,
            completed_at=r.completed_at,
        )
        for r, name in rows
    ]


def as_csv(rows: list[ReportRow]) -> str:
    """RFC 4180 CSV with a header row; amounts as plain decimals, times in ISO 8601 UTC. A
    text cell that a spreadsheet would run as a formula is prefixed with `'`."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow(
            [
                row.redemption_id,
                row.voucher_id,
                _cell(row.voucher_name),
                row.user_id,
                format(row.amount, "f"),
                row.currency,
                row.status,
                row.error_code or "",
                row.created_at.isoformat(),
                row.completed_at.isoformat() if row.completed_at else "",
            ]
        )
    return out.getvalue()


def _cell(text: str) -> str:
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
