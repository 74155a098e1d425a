"""Rewards delivered as vouchers assigned to their beneficiary (`DeliveryMode` `VOUCHER`).

When a reward of such a programme is released, the UPDATE that makes it `PAYABLE` also
assigns it a voucher (its own id and the assignment's, both unique) valid for the programme's
`VoucherClaimDays`, so a reward is assigned exactly once. The voucher has no code: it is tied
to its user, who redeems it by naming one of their cards. Redeeming it is paying the reward
(`finplat.referrals.payouts`): a card credit from the company's rewards account, once (the
reward's stage moves by a conditional UPDATE), the reward then `PAID`. A voucher not redeemed
by `ValidUntil` expires: its reward is `CANCELLED` (`VOUCHER_EXPIRED`), by the referral job or
by the redemption that finds it late.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.pagination import PageRequest, PageSlice
from finplat.providers.registry import Providers
from finplat.referrals import payouts
from finplat.referrals.errors import AssignedVoucherExpired, AssignedVoucherNotFound
from finplat.referrals.models import ReferralReward
from finplat.referrals.repository import RewardRepository
from finplat.referrals.schemas import Delivery
from finplat.users import service as users

EXPIRED = "VOUCHER_EXPIRED"


def assignment(now: datetime, claim_days: int) -> dict[str, Any]:
    """The columns that assign a released reward its voucher."""
    return {
        "voucher_id": str(uuid.uuid4()),
        "voucher_assignment_id": str(uuid.uuid4()),
        "voucher_assigned_at": now,
        "voucher_valid_until": now + timedelta(days=claim_days),
    }


def is_expired(reward: ReferralReward, now: datetime) -> bool:
    return (
        reward.stage == "PAYABLE"
        and reward.voucher_valid_until is not None
        and reward.voucher_valid_until <= now
    )


async def of_user(
    session: AsyncSession, *, company_id: int, user_id: int, page: PageRequest
) -> PageSlice[ReferralReward]:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    return await RewardRepository(session, company_id).assigned_vouchers(user_id, page)


async def redeem(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    assignment_id: str,
    card_id: int,
    claim: Claim,
) -> ReferralReward:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    rewards = RewardRepository(session, company_id)
    reward = await rewards.by_assignment(assignment_id)
    if reward is None or reward.beneficiary_user_id != user_id:
        raise AssignedVoucherNotFound()
    now = utcnow()
    if is_expired(reward, now):
        await rewards.move(
            reward.id,
            from_=("PAYABLE",),
            to="CANCELLED",
            cancel_reason=EXPIRED,
            cancelled_at=now,
            updated_at=now,
        )
        await session.commit()
        raise AssignedVoucherExpired()
    if reward.stage == "CANCELLED" and reward.cancel_reason == EXPIRED:
        raise AssignedVoucherExpired()
    return await payouts.pay(
        session,
        providers,
        company_id=company_id,
        user_id=user_id,
        reward_id=reward.id,
        card_id=card_id,
        claim=claim,
        delivery=Delivery.VOUCHER,
    )


async def expire(session: AsyncSession, *, company_id: int) -> int:
    """Cancel the rewards whose assigned voucher ran out unredeemed."""
    rewards = RewardRepository(session, company_id)
    now = utcnow()
    expired = 0
    for reward_id in await rewards.vouchers_expired(now):
        expired += int(
            await rewards.move(
                reward_id,
                from_=("PAYABLE",),
                to="CANCELLED",
                cancel_reason=EXPIRED,
                cancelled_at=now,
                updated_at=now,
            )
        )
    return expired
