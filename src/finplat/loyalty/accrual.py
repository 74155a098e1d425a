"""Points for card purchases: a purchase whose MID is a merchant's is assigned to the
merchant's programme at its first event (`on_card_transaction`, called by
`cards.transactions.service.apply` in the same transaction, under the card's row lock), or by
the legacy auto-assign call. A card transaction has at most one award (unique), and at every
later event its points are brought to what the amount paid (cleared - refunded) earns: a
clearing awards, a refund takes back, a reversal before clearing never awarded anything."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards import lookup
from finplat.cards.transactions.models import CardTransaction
from finplat.kit.clock import utcnow
from finplat.loyalty import points
from finplat.loyalty.errors import AlreadyAssigned, NoMatchingMerchant, ProgramInactive
from finplat.loyalty.models import (
    AwardSource,
    LoyaltyAward,
    LoyaltyMerchant,
    LoyaltyProgram,
    LoyaltyProgramStatus,
    PointsRule,
)
from finplat.loyalty.repository import AwardRepository, MerchantRepository, MidRepository
from finplat.loyalty.service import find_program


async def on_card_transaction(session: AsyncSession, txn: CardTransaction) -> None:
    """Every event of a purchase: match it once, then keep its points to what it paid."""
    if txn.cleared_minor == 0:
        # Points follow what was paid, and nothing is paid before a clearing (a refund needs
        # one first): an authorization, an increment or a reversal never changes an award, so
        # the card's decision path does not even look for one.
        return
    awards = AwardRepository(session, txn.company_id)
    award = await awards.of_card_transaction(txn.id)
    if award is None:
        merchant = await _merchant_of(session, txn)
        if merchant is None:
            return
        program = await find_program(
            session, company_id=txn.company_id, program_id=merchant.program_id
        )
        if program.status != LoyaltyProgramStatus.ACTIVE.value:
            return
        award = await _award(session, txn, program, merchant, AwardSource.MATCHED)
    _settle(award, txn)
    await session.flush()


async def assign(
    session: AsyncSession, *, company_id: int, txn: CardTransaction, program_id: int | None
) -> LoyaltyAward:
    """The legacy auto-assign: the purchase to `program_id`, or without one to the programme
    of the merchant its MID matches. Assigning it again to the same programme answers the
    award it has; to another programme is refused."""
    # The card's lock, as every event of the purchase takes it: one assignment at a time.
    await lookup.find_card(session, company_id=company_id, card_id=txn.card_id, lock=True)
    await session.refresh(txn)
    awards = AwardRepository(session, company_id)
    award = await awards.of_card_transaction(txn.id)
    merchant = await _merchant_of(session, txn)
    if award is None:
        if program_id is None:
            if merchant is None:
                raise NoMatchingMerchant()
            program_id = merchant.program_id
        program = await find_program(session, company_id=company_id, program_id=program_id)
        if program.status != LoyaltyProgramStatus.ACTIVE.value:
            raise ProgramInactive()
        award = await _award(session, txn, program, merchant, AwardSource.ASSIGNED)
    elif program_id is not None and award.program_id != program_id:
        await find_program(session, company_id=company_id, program_id=program_id)
        raise AlreadyAssigned()
    _settle(award, txn)
    await session.flush()
    return award


async def _merchant_of(session: AsyncSession, txn: CardTransaction) -> LoyaltyMerchant | None:
    if txn.mid is None:
        return None
    mid = await MidRepository(session, txn.company_id).by_mid(txn.mid)
    if mid is None:
        return None
    return await MerchantRepository(session, txn.company_id).get(mid.merchant_id)


async def _award(
    session: AsyncSession,
    txn: CardTransaction,
    program: LoyaltyProgram,
    merchant: LoyaltyMerchant | None,
    source: AwardSource,
) -> LoyaltyAward:
    return await AwardRepository(session, txn.company_id).add(
        LoyaltyAward(
            program_id=program.id,
            merchant_id=merchant.id if merchant else None,
            user_id=txn.user_id,
            source=source.value,
            card_transaction_id=txn.id,
            mid=txn.mid,
            currency=txn.currency,
            paid_minor=0,
            points_rule=program.points_rule,
            points_rate=program.points_rate,
            points=0,
            occurred_at=txn.authorized_at or txn.created_at or utcnow(),
        )
    )


def _settle(award: LoyaltyAward, txn: CardTransaction) -> None:
    paid = max(0, txn.cleared_minor - txn.refunded_minor)
    if paid == award.paid_minor:
        return
    award.paid_minor = paid
    award.points = points.earned(
        PointsRule(award.points_rule), award.points_rate, paid_minor=paid, currency=award.currency
    )
    award.updated_at = utcnow()
