"""Decline fees: a declined purchase costs the tier's decline fee (when one is configured and
the decline happened on or after 2026-07-01), on card-provider cards only.

The fee is taken from the card (provider unload keyed by the declined transaction; ledger
card -> fee revenue). When the card cannot pay it, nothing is taken: the card becomes
`SYSTEM_BLOCKED` (blocked at the provider) with the fee outstanding; enabling it is refused
until a top-up pays the fee first (`funding.topup`), which unblocks it. A block the provider
does not confirm (no answer, a failure) leaves the decline and the fee standing and is repeated
by the background job until it holds (`provider_blocks`).

Cancelling a card settles what it still owes: the outstanding fee is collected from what the
card holds before the rest goes back to the master account (`collect_for_cancellation`), and
whatever it cannot pay is written off when the provider has cancelled it (`write_off`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import lookup, programs
from finplat.cards.funding import fees, provider_blocks
from finplat.cards.funding import service as funding
from finplat.cards.funding.models import CardFunding
from finplat.cards.funding.service import CANCELLATION, RESERVED, FundingKind, FundingStatus
from finplat.cards.models import Card
from finplat.cards.status import CardStatus
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg
from finplat.ledger.service import CompanyAccount
from finplat.providers.errors import ProviderUnavailable
from finplat.providers.registry import Providers

CARD_PROVIDER = "cardprov"


class DeclineFeeStatus(StrEnum):
    NONE = "NONE"  # no fee: none configured, before 2026-07-01, or not a card-provider card
    COLLECTED = "COLLECTED"  # taken from the card
    PENDING = "PENDING"  # reserved on the card; the provider's answer is awaited
    OUTSTANDING = "OUTSTANDING"  # the card could not pay: owed, the card SYSTEM_BLOCKED


@dataclass(frozen=True)
class DeclineFee:
    amount_minor: int
    status: DeclineFeeStatus


NO_FEE = DeclineFee(0, DeclineFeeStatus.NONE)


def _key(card: Card, transaction_id: str) -> str:
    digest = hashlib.sha256(f"{card.company_id}\x1f{transaction_id}".encode()).hexdigest()
    return f"df_{digest[:40]}"


async def charge(
    session: AsyncSession, providers: Providers, *, card: Card, transaction_id: str
) -> DeclineFee:
    """Charge the decline fee of one declined transaction.

    A card that can pay has the fee reserved and unloaded at the provider (`COLLECTED`). When
    the provider does not answer, the reservation stays and is settled by a later retry,
    cancellation or reconciliation with the provider's answer (`PENDING`): the decline itself
    stands either way. A card that cannot pay, by the ledger or by the provider's refusal, is
    blocked with the fee owed (`OUTSTANDING`)."""
    if card.provider != CARD_PROVIDER or card.status == CardStatus.CANCELLED:
        return NO_FEE
    schedule = await fees.schedule_for(session, company_id=card.company_id, tier_id=card.tier_id)
    fee = fees.decline_fee_due(schedule)
    if fee == 0:
        return NO_FEE
    company_id, card_id = card.company_id, card.id
    locked = await lookup.find_card(session, company_id=company_id, card_id=card_id, lock=True)
    account = await funding.card_account(session, locked)
    held = await ledger.balance_of(session, account)
    # Refuse (503 or 409) before anything is written when the card cannot reach its provider.
    programs.program_of(providers, locked)
    programs.provider_card_id(locked)
    if held.available >= fee:
        revenue = await ledger.company_account(
            session, company_id=company_id, kind=CompanyAccount.FEE_REVENUE, currency=card.currency
        )
        key = _key(locked, transaction_id)
        pending = await ledger.create_pending(
            session,
            company_id=company_id,
            legs=[Leg(account.id, -fee), Leg(revenue.id, fee)],
            code="card.decline_fee",
            expires_at=None,
            reference=key,
            details={"cardId": card_id, "transactionId": transaction_id},
            require_available=True,
        )
        row = CardFunding(
            company_id=company_id,
            card_id=card_id,
            kind=FundingKind.DECLINE_FEE.value,
            status=FundingStatus.PENDING.value,
            currency=card.currency,
            amount_minor=fee,
            fee_minor=fee,
            provider_key=key,
            ledger_pending_id=pending.transfer_id,
        )
        session.add(row)
        await session.flush()
        # The funding's own resumption: a refusal voids the reservation, a timeout leaves it
        # pending for `funding.settle_pending`.
        claim = Claim(
            company_id=company_id,
            key=key,
            token="",
            recovery_point=RESERVED,
            state={"funding_id": row.id},
        )
        try:
            await funding.unload(
                session,
                providers,
                claim=claim,
                company_id=company_id,
                card_id=card_id,
                money=Money(fee, card.currency),
            )
        except ProviderUnavailable:
            return DeclineFee(fee, DeclineFeeStatus.PENDING)
        except funding.InsufficientCardBalance:
            # The provider holds less than the ledger shows (its reservation is void): the card
            # cannot pay after all. The provider call ended the transaction: lock the card anew.
            locked = await lookup.find_card(
                session, company_id=company_id, card_id=card_id, lock=True
            )
            if locked.status == CardStatus.CANCELLED:
                return NO_FEE  # cancelled meanwhile: nothing more is owed
        else:
            return DeclineFee(fee, DeclineFeeStatus.COLLECTED)
    locked.outstanding_fee_minor += fee
    locked.status = CardStatus.SYSTEM_BLOCKED
    # Durable before the provider is asked: a lost or failed block is repeated by the job.
    locked.provider_block_pending = True
    await provider_blocks.block(session, providers, locked)
    return DeclineFee(fee, DeclineFeeStatus.OUTSTANDING)


async def collect_for_cancellation(session: AsyncSession, providers: Providers, card: Card) -> int:
    """Collect the card's unpaid decline fee from its available balance before it is
    cancelled (at most what it holds): a `DECLINE_FEE` funding, card -> fee revenue, reserved
    and then posted on the provider's unload, like `charge`. Returns what it collected.

    Safe to repeat after a provider timeout: the pending collection is settled first
    (`funding.settle_pending`) and only what is still owed is collected again."""
    company_id, card_id = card.company_id, card.id
    await funding.settle_pending(session, providers, company_id=company_id, card_id=card_id)
    locked = await lookup.find_card(session, company_id=company_id, card_id=card_id, lock=True)
    if locked.outstanding_fee_minor <= 0 or locked.status == CardStatus.CANCELLED:
        return 0
    programs.provider_card_id(locked)
    account = await funding.card_account(session, locked)
    held = await ledger.balance_of(session, account)
    fee = min(locked.outstanding_fee_minor, held.available)
    if fee <= 0:
        return 0
    revenue = await ledger.company_account(
        session, company_id=company_id, kind=CompanyAccount.FEE_REVENUE, currency=locked.currency
    )
    earlier = await funding.cancellation_fundings(session, locked, FundingKind.DECLINE_FEE)
    claim = Claim(company_id=company_id, key=f"card-cancel-fee:{card_id}:{earlier}", token="")
    key = claim.derived_key("decline-fee")
    pending = await ledger.create_pending(
        session,
        company_id=company_id,
        legs=[Leg(account.id, -fee), Leg(revenue.id, fee)],
        code="card.decline_fee",
        expires_at=None,
        reference=key,
        details={"cardId": card_id, "trigger": CANCELLATION},
        require_available=True,
    )
    locked.outstanding_fee_minor -= fee
    row = CardFunding(
        company_id=company_id,
        card_id=card_id,
        kind=FundingKind.DECLINE_FEE.value,
        status=FundingStatus.PENDING.value,
        currency=locked.currency,
        amount_minor=fee,
        fee_minor=fee,
        # The outstanding fee this collection paid: owed again if the provider refuses it.
        fee_paid_minor=fee,
        provider_key=key,
        ledger_pending_id=pending.transfer_id,
        trigger=CANCELLATION,
    )
    session.add(row)
    await session.flush()
    claim.recovery_point, claim.state = RESERVED, {"funding_id": row.id}
    await funding.unload(
        session,
        providers,
        claim=claim,
        company_id=company_id,
        card_id=card_id,
        money=Money(fee, locked.currency),
    )
    return fee


async def write_off(session: AsyncSession, card: Card) -> int:
    """At cancellation (the card locked, the provider has cancelled it), the decline fee the
    card could not pay is written off: the card owes nothing more, and a `WRITTEN_OFF`
    `DECLINE_FEE` funding records how much. No ledger transfer: an unpaid fee was never booked.
    Returns the amount written off."""
    owed = card.outstanding_fee_minor
    if owed <= 0:
        return 0
    card.outstanding_fee_minor = 0
    now = utcnow()
    session.add(
        CardFunding(
            company_id=card.company_id,
            card_id=card.id,
            kind=FundingKind.DECLINE_FEE.value,
            status=FundingStatus.WRITTEN_OFF.value,
            currency=card.currency,
            amount_minor=owed,
            fee_minor=0,
            fee_paid_minor=0,
            provider_key=f"card-cancel-write-off:{card.id}",
            trigger=CANCELLATION,
            completed_at=now,
        )
    )
    await session.flush()
    return owed
