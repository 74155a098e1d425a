"""A voucher's status as reported: the stored one, or its validity window's verdict."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from finplat.vouchers.models import Voucher


class VoucherStatus(StrEnum):
    ACTIVE = "ACTIVE"  # stored: redeemable within its window and limits
    EXHAUSTED = "EXHAUSTED"  # stored: its total uses or aggregate value are spent
    SCHEDULED = "SCHEDULED"  # reported: before `ValidFrom`
    EXPIRED = "EXPIRED"  # reported: from `ValidUntil` on


def reported(voucher: Voucher, now: datetime) -> VoucherStatus:
    if voucher.status != VoucherStatus.ACTIVE:
        return VoucherStatus(voucher.status)
    if voucher.valid_until is not None and now >= voucher.valid_until:
        return VoucherStatus.EXPIRED
    if voucher.valid_from is not None and now < voucher.valid_from:
        return VoucherStatus.SCHEDULED
    return VoucherStatus.ACTIVE
