"""The real-time authorization decision: a card provider asks, the platform answers at once.

The answer comes from the card's available balance in the ledger (posted - holds) and the
card's state, under the card's row lock (one card's decisions apply one after the other and
never wait on another card's, let alone another company's). An approval is the hold itself,
taken in the same transaction (`service.hold_approved`): its conditional UPDATE refuses what
the available balance does not cover, so parallel purchases can never approve more than the
card has. Typed decline reasons:

* `CARD_CANCELLED`, `CARD_FROZEN`, `SYSTEM_BLOCKED` (an unpaid decline fee), `CARD_INACTIVE`
  (not produced or not activated yet): the card's state;
* `CURRENCY_NOT_SUPPORTED`: not the card's currency;
* `INSUFFICIENT_FUNDS`: the available balance does not cover the amount (a merchant that
  accepts a partial approval is approved for what is available instead);
* `RULE_DECLINED`: an authorization rule of the company fired (`finplat.authorization`;
  the rule's `ResponseCode`); every rule that fired, shadow ones too, is in `RulesFired`;
* `CARD_AUTO_LOCKED` is the provider's own (it holds the lock) and arrives with its decline.

For a partner-hosted company (`PartnerHosted` in its configuration) the balance is the
partner's: after the card's state and the rules, the partner decides
(`finplat.partner_hosted.authorizations`: its answer within `TimeoutMs`, else
`FallbackDecision`), and an approval takes no hold in finplat's ledger (the partner holds the
money). The card's row lock is held while the partner answers, so one card's purchases are
still decided one after the other (velocity rules count exactly).

A repeated request for one authorization id answers the first decision.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.authorization import evaluation
from finplat.cards import lookup
from finplat.cards.funding import service as funding
from finplat.cards.models import Card
from finplat.cards.status import CardStatus
from finplat.cards.transactions import repository, service
from finplat.cards.transactions.models import CardTransaction
from finplat.cards.transactions.purchase import PurchaseStatus
from finplat.cards.transactions.purchase_card import PurchaseCard
from finplat.cards.transactions.repository import CardTransactionRepository
from finplat.kit.clock import utcnow
from finplat.ledger import service as ledger
from finplat.ledger.service import InsufficientFunds
from finplat.partner_hosted import authorizations as partner
from finplat.partner_hosted.authorizations import Hosting, PartnerDecision
from finplat.partner_hosted.notifications import notify
from finplat.partner_hosted.outbox import Operation

APPROVED = "00"
PARTIALLY_APPROVED = "10"
INSUFFICIENT_FUNDS = "INSUFFICIENT_FUNDS"
RESPONSE_CODES = {
    INSUFFICIENT_FUNDS: "51",
    "CARD_CANCELLED": "54",
    "CARD_FROZEN": "62",
    "CARD_AUTO_LOCKED": "62",
    "SYSTEM_BLOCKED": "62",
    "CARD_INACTIVE": "78",
    "CURRENCY_NOT_SUPPORTED": "57",
    "RULE_DECLINED": "57",
    partner.PARTNER_DECLINED: "05",
    partner.PARTNER_UNAVAILABLE: "91",
    "SUSPECTED_FRAUD": "59",
}
DO_NOT_HONOUR = "05"
RULE_DECLINED = "RULE_DECLINED"
STATE_REASONS = {
    CardStatus.CANCELLED: "CARD_CANCELLED",
    CardStatus.FROZEN: "CARD_FROZEN",
    CardStatus.SYSTEM_BLOCKED: "SYSTEM_BLOCKED",
    CardStatus.PENDING: "CARD_INACTIVE",
    CardStatus.INACTIVE: "CARD_INACTIVE",
}


@dataclass(frozen=True)
class AuthorizationRequest:
    authorization_id: str
    amount_minor: int
    currency: str
    merchant: str
    mcc: str | None = None
    country: str | None = None
    partial_allowed: bool = False
    mid: str | None = None


@dataclass(frozen=True)
class Decision:
    transaction_id: int
    # Who decided a partner-hosted purchase (`PARTNER`, `STAND_IN`); None for finplat's own.
    partner_decision: str | None
    approved: bool
    approved_minor: int
    response_code: str
    decline_reason: str | None
    # The company's balances are its partner's: the partner decides what its card can spend,
    # and no decline fee or auto top-up of finplat's follows the purchase.
    partner_hosted: bool
    rules_fired: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Configured:
    """What the card's company has configured that a decision consults, when its caller read
    it with the card (`card_to_decide`): a partner hosting its balances, any active
    authorization rule. Both nearly always absent, and then not read again."""

    partner_hosted: bool
    rules: bool


async def card_to_decide(
    session: AsyncSession, *, company_id: int, provider: str, card_ref: str
) -> tuple[PurchaseCard, Configured] | None:
    """The card a provider's real-time request names (`card_ref`: the provider's id), locked
    for the decision, with what its company has configured; None for a card the platform
    does not hold."""
    found = await repository.card_to_decide(
        session, company_id=company_id, provider=provider, provider_card_id=card_ref
    )
    if found is None:
        return None
    card, hosted, rules = found
    return card, Configured(partner_hosted=hosted, rules=rules)


async def user_card_to_decide(
    session: AsyncSession, *, company_id: int, card_id: int, user_id: int
) -> tuple[Card, Configured] | None:
    """The user's card a sandbox purchase names, as `card_to_decide`."""
    return _configured(
        await repository.user_card_to_decide(
            session, company_id=company_id, card_id=card_id, user_id=user_id
        )
    )


def _configured(found: tuple[Card, bool, bool] | None) -> tuple[Card, Configured] | None:
    if found is None:
        return None
    card, hosted, rules = found
    return card, Configured(partner_hosted=hosted, rules=rules)


def response_code(reason: str | None) -> str:
    return APPROVED if reason is None else RESPONSE_CODES.get(reason, DO_NOT_HONOUR)


async def decide(
    session: AsyncSession,
    *,
    company_id: int,
    card: PurchaseCard,
    request: AuthorizationRequest,
    allow_loopback: bool = False,
    follow_up_later: bool = False,
    configured: Configured | None = None,
) -> Decision:
    """Approve (the hold is taken) or decline one authorization request on the company's
    card; the purchase is recorded either way. `card` is read with its row lock by the caller
    (`card_to_decide`, `user_card_to_decide`): decisions on one card are taken one after the
    other, each on the balance the one before left. `allow_loopback`: a
    partner-hosted company's partner may be on a loopback address (development).
    `follow_up_later`: the purchase's decline fee and auto top-up are left to the background
    job (`follow_up`), marked due with the decision, for a caller that cannot wait for them.
    `configured`: what the caller read with the card (`card_to_decide`), else read here."""
    hosting = None
    if configured is None or configured.partner_hosted:
        hosting = await partner.hosting_of(
            session, company_id=company_id, allow_loopback=allow_loopback
        )
    hosted = hosting is not None
    txns = CardTransactionRepository(session, company_id)
    purchase: dict[str, Any] = {
        "card_id": card.id,
        "user_id": card.user_id,
        "provider": card.provider,
        "authorization_id": request.authorization_id,
        "currency": card.currency,
        "merchant": request.merchant,
        "mcc": request.mcc,
        "country": request.country,
        "mid": request.mid,
        "status": PurchaseStatus.PENDING.value,
        "requested_minor": request.amount_minor,
        "follow_up_at": utcnow() if follow_up_later and not hosted else None,
    }
    if hosting is not None:
        return await _decide_with_partner(session, hosting, card, request, purchase, configured)
    judged = await _judge(session, card, request, rules_here=configured is None or configured.rules)
    rules = judged.rules
    purchase["rules_fired"] = json.dumps(rules.fired if rules else [])
    held = None if judged.reason is not None else await _held(session, card, request)
    if held is not None:
        hold_id, approved_minor = held
        partial = approved_minor < request.amount_minor
        purchase |= {
            "status": PurchaseStatus.AUTHORIZED.value,
            "response_code": PARTIALLY_APPROVED if partial else APPROVED,
            "authorized_minor": approved_minor,
            "authorized_at": utcnow(),
            "held_minor": approved_minor,
            "hold_transfer_id": hold_id,
        }
    else:
        purchase |= _declined(judged.reason or INSUFFICIENT_FUNDS, rules)
    # Written once, with its decision: the authorization id's unique key finds an ask the
    # provider repeats (the card's lock orders the two), whose first decision stands. Only its
    # id comes back: the answer is what was written.
    txn_id = await txns.insert_unless_taken(purchase)
    if txn_id is None:
        if held is not None:
            await service.release_unrecorded_hold(session, card, held[0])
        earlier = await txns.by_authorization(card.provider, request.authorization_id)
        assert earlier is not None
        return _answer(earlier, partner_hosted=False)
    return _decision(
        txn_id,
        partner_decision=None,
        declined=purchase.get("declined", False),
        authorized_minor=purchase.get("authorized_minor", 0),
        code=purchase["response_code"],
        decline_reason=purchase.get("decline_reason"),
        rules_fired=purchase["rules_fired"],
        partner_hosted=False,
    )


def _declined(reason: str, rules: evaluation.Outcome | None) -> dict[str, Any]:
    return {
        "declined": True,
        "decline_reason": reason,
        "status": PurchaseStatus.DECLINED.value,
        "response_code": (
            rules.response_code if reason == RULE_DECLINED and rules else response_code(reason)
        ),
    }


async def _decide_with_partner(
    session: AsyncSession,
    hosting: Hosting,
    asked: PurchaseCard,
    request: AuthorizationRequest,
    purchase: dict[str, Any],
    configured: Configured | None,
) -> Decision:
    """A partner-hosted company's decision: the card's state and the rules here, then the
    partner's answer. The purchase is written first: the partner hears of it by its id."""
    # The partner's approval books through the card's entity (already locked by the caller).
    card = await lookup.find_card(session, company_id=asked.company_id, card_id=asked.id)
    txns = CardTransactionRepository(session, card.company_id)
    txn = await txns.add_new(purchase)
    if txn is None:  # the provider asked again: the card's lock orders the two asks
        earlier = await txns.by_authorization(card.provider, request.authorization_id)
        assert earlier is not None
        return _answer(earlier, partner_hosted=True)
    judged = await _judge(
        session, asked, request, rules_here=configured is None or configured.rules
    )
    reason, approved_minor, rules = judged.reason, judged.approved_minor, judged.rules
    if reason is None:
        answer = await _ask_partner(session, hosting, txn, request)
        reason, approved_minor = answer.decline_reason, answer.approved_minor
    txn.rules_fired = json.dumps(rules.fired if rules else [])
    if reason is None:
        partial = approved_minor < request.amount_minor
        txn.response_code = PARTIALLY_APPROVED if partial else APPROVED
        await service.authorize_decided(session, card, txn, approved_minor=approved_minor)
    else:
        for name, value in _declined(reason, rules).items():
            setattr(txn, name, value)
    await txns.save(txn)
    return _answer(txn, partner_hosted=True)


async def _ask_partner(
    session: AsyncSession, hosting: Hosting, txn: CardTransaction, request: AuthorizationRequest
) -> PartnerDecision:
    """The partner's decision on a purchase the card and the rules let through, and what it
    must hear back: the reversal of a timeout under a `DECLINE` fallback (undoing an approval
    that comes too late) or of an approval finplat could not take, and the stand-in approval
    under an `APPROVE` fallback."""
    ref = await service.purchase_ref(session, txn)
    asked = await partner.ask(
        hosting,
        partner.Purchase(
            card_transaction_id=txn.id,
            authorization_id=txn.authorization_id,
            external_user_id=ref.external_user_id,
            card_id=txn.card_id,
            amount_minor=request.amount_minor,
            currency=request.currency,
            merchant=request.merchant,
            mcc=request.mcc,
            country=request.country,
            partial_allowed=request.partial_allowed,
        ),
    )
    txn.partner_decision = "STAND_IN" if asked.stand_in else "PARTNER"
    if asked.stand_in and asked.approved_minor > 0:
        await notify(
            session,
            ref,
            operation=Operation.ADJUSTMENT,
            amount_minor=asked.approved_minor,
            source="decision",
            reason="STAND_IN_APPROVAL",
        )
    elif asked.stand_in or asked.not_taken:
        await notify(
            session,
            ref,
            operation=Operation.REVERSAL,
            amount_minor=request.amount_minor,
            source="decision",
            reason="TIMEOUT" if asked.stand_in else "NOT_TAKEN",
        )
    return asked


@dataclass(frozen=True)
class _Judgement:
    reason: str | None
    approved_minor: int
    rules: evaluation.Outcome | None = None


async def _judge(
    session: AsyncSession,
    card: PurchaseCard,
    request: AuthorizationRequest,
    *,
    rules_here: bool,
) -> _Judgement:
    """The card's state first, then the company's rules (each evaluated and reported; none
    when the company has none: `rules_here` false). The balance is the hold's to judge
    (`_held`) when it is finplat's, the partner's when it is the partner's."""
    state = STATE_REASONS.get(CardStatus(card.status))
    if state is not None:
        return _Judgement(state, 0)
    if request.currency != card.currency:
        return _Judgement("CURRENCY_NOT_SUPPORTED", 0)
    rules = evaluation.Outcome([], None)  # a company without an active rule
    if rules_here:
        rules = await evaluation.evaluate(
            session,
            evaluation.Purchase(
                company_id=card.company_id,
                card_id=card.id,
                user_id=card.user_id,
                provider=card.provider,
                amount_minor=request.amount_minor,
                currency=request.currency,
                mcc=request.mcc,
                country=request.country,
            ),
        )
    if rules.declined_by is not None:
        return _Judgement(RULE_DECLINED, 0, rules)
    return _Judgement(None, request.amount_minor, rules)


async def _held(
    session: AsyncSession, card: PurchaseCard, request: AuthorizationRequest
) -> tuple[int, int] | None:
    """The purchase held on the card's available balance (posted - holds): the amount asked
    for, else, for a merchant that accepts a partial approval, what is available; `(hold's
    transfer id, amount held)`, or None when nothing can be (`INSUFFICIENT_FUNDS`). The hold's
    own conditional UPDATE judges the balance (`require_available`), so an approval reads no
    balance first; only a partial approval reads what is left."""
    sides = await _purchase_accounts(session, card)

    async def hold(amount_minor: int) -> int | None:
        try:
            return await service.hold_approved(
                session,
                card,
                authorization_id=request.authorization_id,
                merchant=request.merchant,
                amount_minor=amount_minor,
                account=sides.card,
                settlement=sides.settlement,
            )
        except InsufficientFunds:
            return None

    hold_id = await hold(request.amount_minor)
    if hold_id is not None:
        return hold_id, request.amount_minor
    if not request.partial_allowed:
        return None
    available = (
        await ledger.balance(session, company_id=card.company_id, account_id=sides.card.id)
    ).available
    if available <= 0:
        return None
    hold_id = await hold(available)
    return None if hold_id is None else (hold_id, available)


async def _purchase_accounts(session: AsyncSession, card: PurchaseCard) -> funding.PurchaseAccounts:
    if card.account is not None and card.settlement is not None:
        return funding.PurchaseAccounts(card.account, card.settlement)
    if card.ledger_account_id is not None:
        sides = await funding.purchase_accounts(
            session,
            company_id=card.company_id,
            card_account_id=card.ledger_account_id,
            currency=card.currency,
        )
        if sides is not None:
            return sides
    # A card without its ledger account (ordered before cards had one): opened through its
    # entity, which records it.
    entity = await lookup.find_card(session, company_id=card.company_id, card_id=card.id)
    opened = await funding.open_card_account(session, entity)
    sides = await funding.purchase_accounts(
        session, company_id=card.company_id, card_account_id=opened.id, currency=card.currency
    )
    assert sides is not None
    return sides


def _answer(txn: CardTransaction, *, partner_hosted: bool) -> Decision:
    return _decision(
        txn.id,
        partner_decision=txn.partner_decision,
        declined=txn.declined,
        authorized_minor=txn.authorized_minor,
        code=txn.response_code,
        decline_reason=txn.decline_reason,
        rules_fired=txn.rules_fired,
        partner_hosted=partner_hosted,
    )


def _decision(
    txn_id: int,
    *,
    partner_decision: str | None,
    declined: bool,
    authorized_minor: int,
    code: str | None,
    decline_reason: str | None,
    rules_fired: str,
    partner_hosted: bool,
) -> Decision:
    """The answer of a purchase as recorded (`code`: its response code, if it has one;
    `rules_fired`: their JSON)."""
    approved = not declined and authorized_minor > 0
    return Decision(
        transaction_id=txn_id,
        partner_decision=partner_decision,
        approved=approved,
        approved_minor=authorized_minor if approved else 0,
        response_code=code or response_code(decline_reason),
        decline_reason=decline_reason,
        rules_fired=json.loads(rules_fired),
        partner_hosted=partner_hosted,
    )
