"""Card transactions: every purchase event a card provider reports (`card.transaction`
callbacks, through the one inbound path) applied to the purchase and the ledger exactly once
per provider event id, in any order (`purchase` holds the rules).

Ledger: a purchase's hold is a pending debit of the card's account (card -> settlement); a
clearing posts from the hold what it clears (the rest of the hold is released; beyond the hold
it is posted directly: the network's clearing stands whatever the card has); a refund credits
the card back (settlement -> card). The card row is locked before the ledger accounts, the
order of every card money path, so events of one card apply one after the other.

Loyalty (`finplat.loyalty.accrual`) sees every applied event in the same transaction: a
purchase whose MID is a merchant's earns points on what it paid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import structlog
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.cards import lookup
from finplat.cards.funding import service as funding
from finplat.cards.models import Card
from finplat.cards.repository import CardRepository
from finplat.cards.transactions import repository
from finplat.cards.transactions.models import CardTransaction, CardTransactionEvent
from finplat.cards.transactions.purchase import EventType, hold_due, status_of
from finplat.cards.transactions.purchase_card import PurchaseCard
from finplat.cards.transactions.repository import CardTransactionRepository
from finplat.db.tenancy import bind_company
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import NotFound
from finplat.events import service as events
from finplat.kit.clock import utcnow
from finplat.kit.money import from_minor
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg, PostingAccount
from finplat.ledger.models import LedgerAccount
from finplat.ledger.service import CompanyAccount
from finplat.loyalty import accrual as loyalty
from finplat.partner_hosted import repository as partner_hosted
from finplat.partner_hosted.notifications import PurchaseRef, notify
from finplat.partner_hosted.outbox import Operation

log = structlog.get_logger("finplat.cards.transactions")
DOMAIN = "card"
DEFAULT_HOLD_EXPIRY = timedelta(days=7)
PROVIDER_DECIDED = "PROVIDER"
EVENT_TYPES = {
    EventType.AUTHORIZATION: "card.transaction.authorized",
    EventType.INCREMENTAL: "card.transaction.authorized",
    EventType.CLEARING: "card.transaction.cleared",
    EventType.REVERSAL: "card.transaction.reversed",
    EventType.REFUND: "card.transaction.refunded",
    EventType.DECLINE: "card.transaction.declined",
    EventType.EXPIRY: "card.transaction.expired",
}
# The provider's reasons, in the platform's words.
PROVIDER_DECLINE_REASONS = {
    "AUTO_LOCKED": "CARD_AUTO_LOCKED",
    "CARD_BLOCKED": "SYSTEM_BLOCKED",
    "CARD_SYSTEM_BLOCKED": "SYSTEM_BLOCKED",
    "CARD_PENDING": "CARD_INACTIVE",
    "CARD_INACTIVE": "CARD_INACTIVE",
}


class CardTransactionNotFound(NotFound):
    code = "CARD_TRANSACTION_NOT_FOUND"
    message = "No card transaction with that id."


@dataclass(frozen=True)
class ProviderEvent:
    """One `card.transaction` event as the provider reported it."""

    provider: str
    event_id: str
    card_ref: str
    authorization_id: str
    type: EventType
    amount_minor: int
    currency: str
    merchant: str | None = None
    mcc: str | None = None
    country: str | None = None
    decline_reason: str | None = None
    timestamp: str | None = None
    mid: str | None = None


async def event_card(
    session: AsyncSession, *, company_id: int, provider: str, card_ref: str
) -> Card | None:
    """The card a provider event names, locked for the event's booking; None for a card the
    platform does not hold (one another platform holds at the provider)."""
    return await CardRepository(session, company_id).by_provider_card(provider, card_ref, lock=True)


async def apply(
    session: AsyncSession, *, company_id: int, card: Card, event: ProviderEvent
) -> None:
    """Apply one provider event to its purchase and the ledger, once per provider event id.

    `card` is the event's card, locked (`event_card`); an event whose currency is not the
    card's is refused as unreadable."""
    if event.currency != card.currency:
        raise ValueError("currency is not the card's")
    if event.amount_minor < 0:
        raise ValueError("amountMinor is negative")
    txns = CardTransactionRepository(session, company_id)
    txn, seen = await txns.for_event(event.provider, event.authorization_id, event.event_id)
    if seen:
        return
    if txn is None:
        txn = await txns.add(
            CardTransaction(
                card_id=card.id,
                user_id=card.user_id,
                provider=event.provider,
                authorization_id=event.authorization_id,
                currency=card.currency,
                merchant=event.merchant,
                mcc=event.mcc,
                country=event.country,
                mid=event.mid,
                status="PENDING",
                requested_minor=event.amount_minor,
                # A purchase the provider authorized without asking: its money is still at
                # the partner, which hears of it (`_tell_partner`).
                partner_decision=PROVIDER_DECIDED
                if await partner_hosted.config_of(session, company_id) is not None
                else None,
            )
        )
    reason = _reason(event)
    clearing = refund = 0
    match event.type:
        case EventType.AUTHORIZATION:
            txn.authorized_minor = max(txn.authorized_minor, event.amount_minor)
            txn.authorized_at = txn.authorized_at or utcnow()
        case EventType.INCREMENTAL:
            txn.incremented_minor += event.amount_minor
            txn.authorized_at = txn.authorized_at or utcnow()
        case EventType.REVERSAL:
            txn.reversed_minor += event.amount_minor
        case EventType.CLEARING:
            txn.cleared_minor += event.amount_minor
            clearing = event.amount_minor
        case EventType.REFUND:
            txn.refunded_minor += event.amount_minor
            refund = event.amount_minor
        case EventType.DECLINE:
            txn.declined = True
            txn.decline_reason = txn.decline_reason or reason
        case EventType.EXPIRY:
            txn.expired = True
    txn.merchant = txn.merchant or event.merchant
    txn.mid = txn.mid or event.mid
    await _book(session, card, txn, clearing=clearing, refund=refund)
    await _record(
        session,
        card,
        txn,
        type_=event.type,
        amount_minor=event.amount_minor,
        provider_event_id=event.event_id,
        reason=reason,
        occurred_at=event.timestamp,
    )
    # Loyalty points follow the amount paid (a clearing awards, a refund takes back).
    await loyalty.on_card_transaction(session, txn)


async def authorize_decided(
    session: AsyncSession,
    card: Card,
    txn: CardTransaction,
    *,
    approved_minor: int,
    account: LedgerAccount | None = None,
    settlement: LedgerAccount | None = None,
) -> None:
    """The platform's own approval (the real-time decision): the hold is taken now, under the
    card's lock, so no later purchase can spend it; the provider's authorization event finds
    it already held. `account` and `settlement`: the card's ledger account and the company's
    settlement account, when the decision has read them."""
    txn.authorized_minor = approved_minor
    txn.authorized_at = utcnow()
    await _book(session, card, txn, clearing=0, refund=0, account=account, settlement=settlement)


async def hold_approved(
    session: AsyncSession,
    card: PurchaseCard,
    *,
    authorization_id: str,
    merchant: str,
    amount_minor: int,
    account: PostingAccount,
    settlement: PostingAccount,
) -> int:
    """The hold of a purchase the platform's own decision approves, taken under the card's
    lock before the purchase is written, so that the purchase is written once, with it
    (`decision.decide`): its details name the card and the authorization id, the purchase
    having no id yet. The card's available balance must cover it (`InsufficientFunds`, with
    nothing changed), though a card's account may otherwise go negative (a clearing beyond
    its hold). Returns the hold's transfer id."""
    hold = await ledger.create_pending(
        session,
        company_id=card.company_id,
        legs=[Leg(account.id, -amount_minor), Leg(settlement.id, amount_minor)],
        code="card.purchase",
        expires_at=None,
        details={"cardId": card.id, "authorizationId": authorization_id, "merchant": merchant},
        require_available=True,
        accounts=(account, settlement),
    )
    return hold.transfer_id


async def release_unrecorded_hold(
    session: AsyncSession, card: PurchaseCard, transfer_id: int
) -> None:
    """A `hold_approved` whose purchase the provider had asked for before (its authorization
    id already decided): the first decision stands, and this hold is released."""
    await ledger.void_pending(session, company_id=card.company_id, pending_id=transfer_id)


async def _book(
    session: AsyncSession,
    card: Card,
    txn: CardTransaction,
    *,
    clearing: int,
    refund: int,
    account: LedgerAccount | None = None,
    settlement: LedgerAccount | None = None,
) -> None:
    """Bring the ledger to what the purchase's totals say (card locked by the caller).

    A partner-hosted purchase moves nothing in the ledger: the money is at the partner, which
    holds, posts and releases it (`_tell_partner`); only its status follows its totals. Nor
    does an event that leaves the hold as it is (the provider's authorization of a purchase the
    platform's decision has already held): the card's accounts stay as the last movement left
    them. The card's row is not written: its balance is its ledger account's (the card's
    `last_balance_minor` is the provider's word, for a card without an account)."""
    unmoved = clearing == 0 and refund == 0 and hold_due(txn) == txn.held_minor
    if txn.partner_decision is not None or unmoved:
        txn.status = status_of(txn).value
        txn.updated_at = utcnow()
        await CardTransactionRepository(session, card.company_id).save(txn)
        return
    account = account or await funding.card_account(session, card)
    settlement = settlement or await ledger.company_account(
        session, company_id=card.company_id, kind=CompanyAccount.SETTLEMENT, currency=card.currency
    )
    company_id, details = card.company_id, {"cardId": card.id, "cardTransactionId": txn.id}
    if clearing > 0:
        from_hold = min(clearing, txn.held_minor)
        if txn.hold_transfer_id is not None:
            if from_hold > 0:
                await ledger.post_pending(
                    session,
                    company_id=company_id,
                    pending_id=txn.hold_transfer_id,
                    legs=[Leg(account.id, -from_hold), Leg(settlement.id, from_hold)],
                    details=details,
                )
            else:
                await ledger.void_pending(
                    session, company_id=company_id, pending_id=txn.hold_transfer_id
                )
            txn.hold_transfer_id, txn.held_minor = None, 0
        beyond = clearing - from_hold
        if beyond > 0:
            await ledger.post_transfer(
                session,
                company_id=company_id,
                legs=[Leg(account.id, -beyond), Leg(settlement.id, beyond)],
                code="card.purchase",
                details=details,
            )
    if refund > 0:
        await ledger.post_transfer(
            session,
            company_id=company_id,
            legs=[Leg(settlement.id, -refund), Leg(account.id, refund)],
            code="card.refund",
            details=details,
        )
    due = hold_due(txn)
    if due != txn.held_minor:
        if txn.hold_transfer_id is not None:
            await ledger.void_pending(
                session, company_id=company_id, pending_id=txn.hold_transfer_id
            )
        txn.hold_transfer_id, txn.held_minor = None, 0
        if due > 0:
            hold = await ledger.create_pending(
                session,
                company_id=company_id,
                legs=[Leg(account.id, -due), Leg(settlement.id, due)],
                code="card.purchase",
                expires_at=None,
                details=details | {"merchant": txn.merchant},
                accounts=(account, settlement),
            )
            txn.hold_transfer_id, txn.held_minor = hold.transfer_id, due
    txn.status = status_of(txn).value
    txn.updated_at = utcnow()
    await CardTransactionRepository(session, card.company_id).save(txn)


async def _record(
    session: AsyncSession,
    card: Card,
    txn: CardTransaction,
    *,
    type_: EventType,
    amount_minor: int,
    provider_event_id: str,
    reason: str | None,
    occurred_at: str | None,
    partner_reason: str | None = None,
) -> None:
    await CardTransactionRepository(session, card.company_id).add_event(
        {
            "card_transaction_id": txn.id,
            "provider": txn.provider,
            "provider_event_id": provider_event_id,
            "type": type_.value,
            "amount_minor": amount_minor,
            "decline_reason": reason,
            "occurred_at": occurred_at,
            "received_at": utcnow(),
        }
    )
    await events.record(
        session,
        company_id=card.company_id,
        type_=EVENT_TYPES[type_],
        domain=DOMAIN,
        provider=txn.provider,
        data=event_data(txn)
        | {"eventType": type_.value, "amount": from_minor(amount_minor, txn.currency)},
    )
    if txn.partner_decision is not None:
        await _tell_partner(
            session,
            txn,
            type_=type_,
            amount_minor=amount_minor,
            source=provider_event_id,
            reason=partner_reason,
        )


async def purchase_ref(session: AsyncSession, txn: CardTransaction) -> PurchaseRef:
    return PurchaseRef(
        company_id=txn.company_id,
        card_transaction_id=txn.id,
        authorization_id=txn.authorization_id,
        external_user_id=await partner_hosted.external_user_id(
            session, company_id=txn.company_id, user_id=txn.user_id
        ),
        card_id=txn.card_id,
        currency=txn.currency,
        merchant=txn.merchant,
    )


async def _tell_partner(
    session: AsyncSession,
    txn: CardTransaction,
    *,
    type_: EventType,
    amount_minor: int,
    source: str,
    reason: str | None,
) -> None:
    """Queue what a partner-hosted purchase's event means for the partner's balance
    (`finplat.partner_hosted.notifications`)."""
    ref = await purchase_ref(session, txn)
    approved = txn.authorized_minor + txn.incremented_minor - txn.reversed_minor
    why: str | None
    match type_:
        case EventType.AUTHORIZATION if txn.partner_decision == PROVIDER_DECIDED:
            operation, minor, why = Operation.ADJUSTMENT, amount_minor, "STAND_IN_APPROVAL"
        case EventType.INCREMENTAL:
            operation, minor, why = Operation.ADJUSTMENT, amount_minor, "INCREMENTAL"
        case EventType.REVERSAL if txn.cleared_minor == 0:
            operation, minor, why = Operation.REVERSAL, amount_minor, reason or "NETWORK"
        case EventType.CLEARING:
            operation, minor, why = Operation.CLEARING, amount_minor, None
        case EventType.REFUND:
            operation, minor, why = Operation.REFUND, amount_minor, None
        case EventType.DECLINE if approved > 0 and txn.cleared_minor == 0:
            operation, minor, why = Operation.REVERSAL, approved, "DECLINED"
        case EventType.EXPIRY if approved > 0 and txn.cleared_minor == 0:
            operation, minor, why = Operation.REVERSAL, approved, "EXPIRED"
        case _:
            return
    if minor > 0:
        await notify(
            session, ref, operation=operation, amount_minor=minor, source=source, reason=why
        )


def event_data(txn: CardTransaction) -> dict[str, Any]:
    return {
        "cardTransactionId": txn.id,
        "authorizationId": txn.authorization_id,
        "cardId": txn.card_id,
        "userId": txn.user_id,
        "status": txn.status,
        "currency": txn.currency,
        "merchant": txn.merchant,
        "mcc": txn.mcc,
        "country": txn.country,
        "mid": txn.mid,
        "heldAmount": from_minor(txn.held_minor, txn.currency),
        "clearedAmount": from_minor(txn.cleared_minor, txn.currency),
        "declineReason": txn.decline_reason,
        "rulesFired": json.loads(txn.rules_fired),
    }


def _reason(event: ProviderEvent) -> str | None:
    if event.decline_reason is None:
        return None
    return PROVIDER_DECLINE_REASONS.get(event.decline_reason, event.decline_reason)[:32]


async def expire_holds(
    factory: async_sessionmaker[AsyncSession],
    *,
    older_than: timedelta = DEFAULT_HOLD_EXPIRY,
    limit: int = 200,
) -> int:
    """Release the hold of every purchase authorized more than `older_than` ago and never
    cleared (7 days by default, `FINPLAT_CARD_HOLD_EXPIRY_DAYS`): status `EXPIRED`,
    `card.transaction.expired`. A clearing that comes later still posts (the network's
    clearing stands). Background job, every company's purchases, one transaction each."""
    async with unit_of_work(factory) as session:
        due = await repository.holds_authorized_before(
            session, before=utcnow() - older_than, limit=limit
        )
    expired = 0
    for company_id, txn_id in due:
        async with unit_of_work(factory) as session:
            bind_company(session, company_id)
            expired += await _expire(session, company_id=company_id, txn_id=txn_id)
    return expired


async def _expire(session: AsyncSession, *, company_id: int, txn_id: int) -> int:
    txns = CardTransactionRepository(session, company_id)
    txn = await txns.get(txn_id)
    if txn is None:
        return 0
    card = await lookup.find_card(session, company_id=company_id, card_id=txn.card_id, lock=True)
    await session.refresh(txn)
    if txn.held_minor <= 0:
        return 0
    released = txn.held_minor
    txn.expired = True
    await _book(session, card, txn, clearing=0, refund=0)
    await _record(
        session,
        card,
        txn,
        type_=EventType.EXPIRY,
        amount_minor=released,
        provider_event_id=f"platform-expiry-{txn.id}",
        reason=None,
        occurred_at=None,
    )
    return 1


async def release_unreported(session: AsyncSession, *, company_id: int, txn_id: int) -> None:
    """The provider failed before it took the approved purchase: the platform's hold is
    released as a reversal of what it still holds (`platform-release-<id>`)."""
    txn = await find(session, company_id=company_id, txn_id=txn_id)
    card = await lookup.find_card(session, company_id=company_id, card_id=txn.card_id, lock=True)
    await session.refresh(txn)
    # What the purchase holds: in the ledger, or at the partner for a partner-hosted one.
    released = txn.held_minor if txn.partner_decision is None else hold_due(txn)
    if released <= 0:
        return
    txn.reversed_minor += released
    await _book(session, card, txn, clearing=0, refund=0)
    await _record(
        session,
        card,
        txn,
        type_=EventType.REVERSAL,
        amount_minor=released,
        provider_event_id=f"platform-release-{txn.id}",
        reason=None,
        occurred_at=None,
        partner_reason="DECLINED",
    )


async def find(session: AsyncSession, *, company_id: int, txn_id: int) -> CardTransaction:
    # Read afresh: events may have moved it in another transaction since it was loaded.
    txn = await CardTransactionRepository(session, company_id).get(txn_id, fresh=True)
    if txn is None:
        raise CardTransactionNotFound()
    return txn


async def find_with_card(
    session: AsyncSession, *, company_id: int, txn_id: int
) -> tuple[CardTransaction, Card]:
    """The purchase and its card read afresh: its events may have moved both in another
    transaction (an auto-lock changes the card's status)."""
    found = await CardTransactionRepository(session, company_id).with_card(txn_id)
    if found is None:
        raise CardTransactionNotFound()
    return found


async def find_by_authorization(
    session: AsyncSession, *, company_id: int, card: Card, authorization_id: str
) -> CardTransaction:
    txn = await CardTransactionRepository(session, company_id).by_authorization(
        card.provider, authorization_id
    )
    if txn is None or txn.card_id != card.id:
        raise CardTransactionNotFound()
    return txn


async def page(
    session: AsyncSession,
    *,
    company_id: int,
    card_id: int | None,
    user_id: int | None,
    statuses: list[str],
    offset: int,
    limit: int,
) -> tuple[list[CardTransaction], dict[int, list[CardTransactionEvent]]]:
    txns = CardTransactionRepository(session, company_id)
    found = await txns.page(
        card_id=card_id, user_id=user_id, statuses=statuses, offset=offset, limit=limit
    )
    by_txn: dict[int, list[CardTransactionEvent]] = {t.id: [] for t in found}
    for e in await txns.events_of([t.id for t in found]):
        by_txn[e.card_transaction_id].append(e)
    return found, by_txn


async def events_of(
    session: AsyncSession, *, company_id: int, txn: CardTransaction
) -> list[CardTransactionEvent]:
    return await CardTransactionRepository(session, company_id).events_of([txn.id])


def hold_deadline(txn: CardTransaction, expiry: timedelta) -> datetime | None:
    return txn.authorized_at + expiry if txn.authorized_at and txn.held_minor else None
