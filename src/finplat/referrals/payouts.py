"""Paying a `PAYABLE` reward: a card credit from the company's rewards account.

The credit is the top-up's own path (card lock, ledger reservation, provider load under a
key derived from the request's, post or void), of kind `REFERRAL_REWARD`, which pays no fee.
The reward moves `PAYABLE` → `PAYING` in the transaction that reserves the money, then
`PAID` once the card is credited; a provider refusal puts it back to `PAYABLE`. A provider that
does not answer leaves it `PAYING`: a retry with the same `Idempotency-Key` resumes it, and
the referral job settles it from the funding's outcome otherwise.
"""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.funding import service as card_funding
from finplat.cards.funding.service import FundingKind, FundingStatus
from finplat.cards.lookup import find_card
from finplat.errors import ApiError
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money
from finplat.ledger.service import CompanyAccount
from finplat.providers.errors import ProviderRejected
from finplat.providers.registry import Providers
from finplat.referrals.errors import (
    RewardCardMismatch,
    RewardDeliveredAsVoucher,
    RewardNotFound,
    RewardNotPayable,
    RewardsFundingShort,
)
from finplat.referrals.models import ReferralReward
from finplat.referrals.repository import RewardRepository
from finplat.users import service as users

PAYING_STATE = "referral_reward"


async def reward_of(
    session: AsyncSession, *, company_id: int, user_id: int, reward_id: str
) -> ReferralReward:
    reward = await RewardRepository(session, company_id).by_id(reward_id)
    if reward is None or reward.beneficiary_user_id != user_id:
        raise RewardNotFound()
    return reward


async def pay(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    user_id: int,
    reward_id: str,
    card_id: int,
    claim: Claim,
    delivery: str = "CARD_CREDIT",
) -> ReferralReward:
    """Pay the reward by `delivery`: a reward delivered as a voucher is paid only by
    redeeming its voucher (`finplat.referrals.assigned_vouchers`)."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    rewards = RewardRepository(session, company_id)
    if claim.resumed and PAYING_STATE in claim.state:
        reward = await reward_of(
            session,
            company_id=company_id,
            user_id=user_id,
            reward_id=str(claim.state[PAYING_STATE]),
        )
        if reward.stage != "PAYING":
            return reward
        return await _credit(session, providers, reward, claim)
    reward = await reward_of(session, company_id=company_id, user_id=user_id, reward_id=reward_id)
    if reward.delivery_mode != delivery:
        raise RewardDeliveredAsVoucher()
    if reward.stage != "PAYABLE":
        raise RewardNotPayable(f"The reward is {reward.stage}; only a PAYABLE reward is paid.")
    card = await find_card(session, company_id=company_id, card_id=card_id, user_id=user_id)
    card.refuse_if_cancelled()
    if card.currency != reward.currency:
        raise RewardCardMismatch(
            f"The reward is in {reward.currency}; the card holds {card.currency}."
        )
    if not await rewards.move(
        reward.id,
        from_=("PAYABLE",),
        to="PAYING",
        credit_id=str(uuid.uuid4()),
        credit_card_id=card.id,
        credit_funding_key=claim.derived_key(card_funding.LOAD_STEP),
        updated_at=utcnow(),
        voucher_valid_at=utcnow(),
    ):
        raise RewardNotPayable()  # a parallel request is paying it (or its voucher expired)
    claim.state[PAYING_STATE] = reward.id
    claim.recovery_point = idempotency.STARTED
    return await _credit(session, providers, await _reread(session, reward), claim)


async def _credit(
    session: AsyncSession, providers: Providers, reward: ReferralReward, claim: Claim
) -> ReferralReward:
    rewards = RewardRepository(session, reward.company_id)
    assert reward.credit_card_id is not None
    try:
        await card_funding.topup(
            session,
            providers,
            claim=claim,
            company_id=reward.company_id,
            card_id=reward.credit_card_id,
            money=Money(reward.amount_minor, reward.currency),
            kind=FundingKind.REFERRAL_REWARD,
            trigger=None,
            source=CompanyAccount.REWARDS,
            short=RewardsFundingShort,
        )
    except RewardsFundingShort:
        raise  # before anything was committed: the reward stays PAYABLE
    except (
        ProviderRejected,
        card_funding.FundingRejected,
        card_funding.FundingFailed,
        card_funding.InsufficientCardBalance,
    ) as error:
        await _back_to_payable(session, reward)
        raise _as_refusal(error) from None
    now = utcnow()
    await rewards.move(reward.id, from_=("PAYING",), to="PAID", paid_at=now, updated_at=now)
    return await _reread(session, reward)


async def _back_to_payable(session: AsyncSession, reward: ReferralReward) -> None:
    """The card was not credited: the reward may be paid again (committed, as the
    refusal's void was)."""
    await RewardRepository(session, reward.company_id).move(
        reward.id,
        from_=("PAYING",),
        to="PAYABLE",
        credit_id=None,
        credit_card_id=None,
        credit_funding_key=None,
        updated_at=utcnow(),
    )
    await session.commit()


def _as_refusal(error: ApiError) -> ApiError:
    return error


async def settle_paying(session: AsyncSession, *, company_id: int) -> int:
    """Rewards left `PAYING` by a provider that did not answer: `PAID` once their card
    funding completed, `PAYABLE` again once it failed."""
    rewards = RewardRepository(session, company_id)
    settled = 0
    for reward in await rewards.paying():
        assert reward.credit_funding_key is not None
        funding = await card_funding.funding_by_key(session, company_id, reward.credit_funding_key)
        now = utcnow()
        if funding is None or funding.status == FundingStatus.FAILED:
            settled += int(
                await rewards.move(
                    reward.id,
                    from_=("PAYING",),
                    to="PAYABLE",
                    credit_id=None,
                    credit_card_id=None,
                    credit_funding_key=None,
                    updated_at=now,
                )
            )
        elif funding.status == FundingStatus.COMPLETED:
            settled += int(
                await rewards.move(
                    reward.id, from_=("PAYING",), to="PAID", paid_at=now, updated_at=now
                )
            )
    return settled


async def _reread(session: AsyncSession, reward: ReferralReward) -> ReferralReward:
    found = await RewardRepository(session, reward.company_id).by_id(reward.id)
    assert found is not None
    return found
