"""Telling a company its voucher funding runs low for a group.

A group's need is what its active vouchers may still redeem, in the voucher currency: each
voucher's remaining uses times its value, capped by what its aggregate cap leaves (a voucher
without a use limit counts one more use). When a completed redemption takes the company's
voucher funding account below `LowBalanceWarningPercentage` of that need,
`voucher.funding.low` is recorded, once per crossing (not again while it stays low).
"""

from __future__ import annotations

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.events import service as events
from finplat.kit.money import Money
from finplat.ledger import service as ledger
from finplat.ledger.service import CompanyAccount
from finplat.vouchers.models import Voucher
from finplat.vouchers.settings import service as settings
from finplat.vouchers.status import VoucherStatus


async def group_need(
    session: AsyncSession, *, company_id: int, group_id: str, currency: str
) -> int:
    remaining_uses = case(
        (Voucher.maximum_total_uses.is_(None), 1),
        else_=Voucher.maximum_total_uses - Voucher.successful_uses,
    )
    by_uses = remaining_uses * Voucher.value_minor
    by_cap = case(
        (Voucher.maximum_aggregate_value_minor.is_(None), by_uses),
        else_=Voucher.maximum_aggregate_value_minor - Voucher.redeemed_value_minor,
    )
    need = case((by_cap < by_uses, by_cap), else_=by_uses)
    stmt = select(func.coalesce(func.sum(need), 0)).where(
        Voucher.company_id == company_id,
        Voucher.group_id == group_id,
        Voucher.currency == currency,
        Voucher.status == VoucherStatus.ACTIVE.value,
    )
    return int((await session.execute(stmt)).scalar_one())


async def after_redemption(
    session: AsyncSession, *, company_id: int, voucher: Voucher, amount_minor: int
) -> None:
    """Record `voucher.funding.low` when this redemption took the funding below the mark."""
    values = await settings.values_for(session, company_id=company_id)
    mark = values.low_balance_warning_percentage
    if mark <= 0:
        return
    currency = voucher.currency
    need = await group_need(
        session, company_id=company_id, group_id=voucher.group_id, currency=currency
    )
    account = await ledger.company_account(
        session, company_id=company_id, kind=CompanyAccount.VOUCHERS, currency=currency
    )
    available = (await ledger.balance_of(session, account)).available
    low_now = available * 100 < need * mark
    low_before = (available + amount_minor) * 100 < (need + amount_minor) * mark
    if not low_now or low_before:
        return
    await events.record(
        session,
        company_id=company_id,
        type_="voucher.funding.low",
        domain="voucher",
        data={
            "groupId": voucher.group_id,
            "currency": currency,
            "available": Money(available, currency).amount,
            "outstanding": Money(need, currency).amount,
            "lowBalanceWarningPercentage": mark,
        },
    )
