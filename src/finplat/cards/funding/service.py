"""Money onto and off cards: top-ups from the company's master account and unloads back to it.

Phases of a top-up (each a recovery point of the request's Idempotency-Key, so a retry resumes
and never loads twice):
  started  -> lock the card; fee from the tier's schedule (percentage rounded up first); an
              outstanding decline fee is paid first from the net; reserve master -Value,
              card +load, fee revenue +fee (+ paid decline fee); record the `PENDING` funding;
              commit (`reserved`)
  reserved -> the provider loads the card under a key derived from the request's key
              (deduplicated there); accepted -> post; refused -> void, `FAILED` (replayed);
              timeout / outage -> 503, the reservation stays pending and a retry with the
              same key resumes here (the provider answers the first load again)
  loaded   -> a card the paid fee had system-blocked is unblocked at the provider
An unload is the same in reverse: card -Value, master +net, fee revenue +fee.

A reservation whose provider outcome is unknown is never voided on a guess: only the provider's
answer for the same key settles it. A retry with the request's key does so; so does
`settle_pending` (run before a card is cancelled, and for fundings made without a key or by the
platform itself: automatic top-ups, decline fees), which resumes the movement under its stored
provider key. A refusal found that way leaves the funding `FAILED`, and a later retry of the
request that made it answers 409 `CARD_FUNDING_FAILED`. Only one caller at a time asks the
provider for a funding (a lease on it): a recorded refusal is never followed by another call
under the same key, which the provider could accept.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from finplat.cards.controls.service import take_control_answer
from finplat.cards.discounts.service import discounted_topup_fee
from finplat.cards.errors import CardCancelled, MasterAccountShort
from finplat.cards.funding.fees import schedule_for
from finplat.cards.funding.models import CardFunding
from finplat.cards.funding.repository import FundingRepository
from finplat.cards.lookup import find_card
from finplat.cards.models import Card
from finplat.cards.programs import change_at_provider, program_of, provider_card_id
from finplat.cards.repository import CardRepository
from finplat.cards.status import CardStatus
from finplat.errors import ApiError, Conflict
from finplat.idempotency import service as idempotency
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import Money
from finplat.ledger import repository as ledger_repository
from finplat.ledger import service as ledger
from finplat.ledger.core import Leg, PostingAccount
from finplat.ledger.models import LedgerAccount
from finplat.ledger.service import CompanyAccount
from finplat.providers.calls import CallPolicy, commit_then_call
from finplat.providers.cards.port import (
    CardAction,
    CardFundsShort,
    CardMovement,
    CardProgram,
    CardUnknownAtProvider,
)
from finplat.providers.errors import ProviderRejected, ProviderUnavailable
from finplat.providers.registry import Providers

MIN_TOPUP = Decimal("5.00")
MAX_TOPUP = Decimal("250000.00")
TOPUP_CURRENCY = "USD"
RESERVED = "reserved"
LOADED = "loaded"
REJECTED = "rejected"
CARD_LEDGER_CODE = "card"
CANCELLATION = "CANCELLATION"  # `trigger` of the unload that empties a card being cancelled
LOAD_STEP = "card-load"  # the step whose derived key a top-up gives the provider


class FundingKind(StrEnum):
    TOPUP = "TOPUP"
    UNLOAD = "UNLOAD"
    AUTO_TOPUP = "AUTO_TOPUP"
    DECLINE_FEE = "DECLINE_FEE"
    VOUCHER = "VOUCHER"  # a redeemed voucher's value, from the company's voucher funding
    REFERRAL_REWARD = "REFERRAL_REWARD"  # a referral reward, from the company's rewards account
    CRYPTO_REFUND = "CRYPTO_REFUND"  # a card unloaded for a failed conversion, loaded back


# Loads onto the card (resumed with `topup`), and what each is paid from.
LOADS = (
    FundingKind.TOPUP,
    FundingKind.AUTO_TOPUP,
    FundingKind.VOUCHER,
    FundingKind.REFERRAL_REWARD,
    FundingKind.CRYPTO_REFUND,
)
# Loads that pay no top-up fee: a voucher's value and a referral reward load whole, and so
# does the money a failed card-provider-to-bank conversion puts back on the card.
FEE_FREE = (FundingKind.VOUCHER, FundingKind.REFERRAL_REWARD, FundingKind.CRYPTO_REFUND)


class FundingStatus(StrEnum):
    PENDING = "PENDING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    WRITTEN_OFF = "WRITTEN_OFF"  # a decline fee the card could not pay by its cancellation


class CardCurrencyMismatch(Conflict):
    code = "CARD_CURRENCY_MISMATCH"
    message = "The card holds another currency."


class InsufficientCardBalance(Conflict):
    code = "INSUFFICIENT_CARD_BALANCE"
    message = "The card does not hold that much."


class FundingRejected(ApiError):
    """The provider's refusal, replayed when a rejected operation is resumed."""


class FundingFailed(Conflict):
    """Resuming a movement that `settle_pending` found refused (the request's own key never
    saw the refusal, so there is none to replay)."""

    code = "CARD_FUNDING_FAILED"
    message = "The provider refused this card movement; its reservation was released."


class FundingInProgress(ApiError):
    """Another caller is asking the provider for this movement right now."""

    status = 503
    code = "CARD_FUNDING_IN_PROGRESS"
    message = "The card provider is being asked for this movement; retry shortly."

    def __init__(self) -> None:
        super().__init__(headers={"Retry-After": "1"})


@dataclass(frozen=True)
class Funded:
    funding: CardFunding
    card: Card


# -------------------------------------------------------------------- the card's ledger account


async def card_account(session: AsyncSession, card: Card) -> LedgerAccount:
    """The ledger account mirroring the card's balance (created on first use).

    It may go negative: purchases are decided by the card provider against what it holds,
    which includes money the ledger has already reserved for an unload still on its way, so
    a purchase is recorded whatever the card's available balance (the unload then fails at
    the provider and its reservation is voided). The platform's own withdrawals (unloads,
    decline fees) pass `require_available` and never take more than the card has."""
    if card.ledger_account_id is not None:
        found = await ledger_repository.accounts_by_id(
            session, company_id=card.company_id, account_ids=[card.ledger_account_id]
        )
        if card.ledger_account_id in found:
            return found[card.ledger_account_id]
    return await open_card_account(session, card)


async def open_card_account(
    session: AsyncSession, card: Card, *, new_card: bool = False
) -> LedgerAccount:
    """The card's ledger account created (`card_account`'s rules), its id set on the card
    (the caller writes the card). `new_card`: the card was created in this transaction, so
    no account can be found for it first."""
    account = await ledger.account(
        session,
        company_id=card.company_id,
        code=CARD_LEDGER_CODE,
        owner_type="card",
        owner_id=str(card.id),
        currency=card.currency,
        allow_negative=True,
        new_owner=new_card,
    )
    card.ledger_account_id = account.id
    return account


async def _funding_accounts(
    session: AsyncSession,
    card: Card,
    currency: str,
    source: CompanyAccount = CompanyAccount.MASTER,
) -> tuple[LedgerAccount, LedgerAccount, LedgerAccount]:
    """The three sides of every card funding, read in one statement: the company's account it
    is paid from or to (`source`: the master account, or the voucher funding for a redeemed
    voucher), its fee revenue account, and the card's account (`card_account`)."""
    company, account = await _with_card_account(
        session, card, (source, CompanyAccount.FEE_REVENUE), currency
    )
    return company[source], company[CompanyAccount.FEE_REVENUE], account


@dataclass(frozen=True)
class PurchaseAccounts:
    """The two sides of a card purchase."""

    card: PostingAccount
    settlement: PostingAccount


async def purchase_accounts(
    session: AsyncSession, *, company_id: int, card_account_id: int, currency: str
) -> PurchaseAccounts | None:
    """The two sides of a card purchase, read as values in one statement: the card's account
    (`card_account_id`, the card's `ledger_account_id`) and the company's settlement account
    in the card's `currency`. None when the company has no account `card_account_id`."""
    found = await ledger.account_and_company_account(
        session,
        company_id=company_id,
        account_id=card_account_id,
        kind=CompanyAccount.SETTLEMENT,
        currency=currency,
    )
    return None if found is None else PurchaseAccounts(*found)


async def _with_card_account(
    session: AsyncSession, card: Card, kinds: tuple[CompanyAccount, ...], currency: str
) -> tuple[dict[CompanyAccount, LedgerAccount], LedgerAccount]:
    """The company's accounts of `kinds` and the card's account (opened when missing)."""
    known = card.ledger_account_id
    company, by_id = await ledger.company_accounts_and(
        session,
        company_id=card.company_id,
        kinds=kinds,
        currency=currency,
        account_ids=[] if known is None else [known],
    )
    account = None if known is None else by_id.get(known)
    if account is None:
        account = await open_card_account(session, card)
    return company, account


def _check_accepts_money(card: Card, currency: str) -> None:
    card.refuse_if_cancelled()
    if card.currency != currency:
        raise CardCurrencyMismatch(f"The card holds {card.currency}, not {currency}.")


async def funding_of(session: AsyncSession, company_id: int, funding_id: int) -> CardFunding:
    return await FundingRepository(session, company_id).one(funding_id)


async def funding_by_key(session: AsyncSession, company_id: int, key: str) -> CardFunding | None:
    """The funding made under provider key `key` (a load's: `claim.derived_key(LOAD_STEP)`)."""
    return await FundingRepository(session, company_id).by_provider_key(key)


async def _resume(session: AsyncSession, claim: Claim, company_id: int) -> CardFunding:
    # Commit the key takeover so no lock is held across the provider call.
    await idempotency.checkpoint(session, claim, claim.recovery_point)
    if claim.recovery_point == REJECTED:
        error = claim.state["error"]
        raise FundingRejected(error["message"], status=error["status"], code=error["code"])
    row = await funding_of(session, company_id, int(claim.state["funding_id"]))
    if row.status == FundingStatus.FAILED:
        raise FundingFailed()
    return row


# ---------------------------------------------------------------------------------- top-up


async def topup(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    card_id: int,
    money: Money,
    kind: FundingKind = FundingKind.TOPUP,
    trigger: str | None = None,
    source: CompanyAccount = CompanyAccount.MASTER,
    short: type[ApiError] = MasterAccountShort,
) -> Funded:
    """Load `money` onto the card from the company's `source` account (`short` when it
    cannot pay). A voucher's value or a referral reward loads whole: its kind pays no
    top-up fee."""
    if claim.recovery_point == idempotency.STARTED:
        card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
        _check_accepts_money(card, money.currency)
        program_of(providers, card)
        provider_card_id(card)
        row, reservation = await _reserve_topup(
            session,
            claim,
            card,
            money,
            kind,
            trigger,
            _lease_end(providers.policy),
            source,
            short,
        )
        await idempotency.checkpoint(session, claim, RESERVED, funding_id=row.id)
    else:
        reservation = None
        row = await _resume(session, claim, company_id)
        card = await find_card(session, company_id=company_id, card_id=row.card_id)
    program = program_of(providers, card)
    if row.status == FundingStatus.PENDING:
        load_minor = row.amount_minor - row.fee_minor - row.fee_paid_minor
        movement = None
        if load_minor > 0:
            movement = await _move(
                session,
                providers,
                program,
                claim,
                card,
                row,
                load=True,
                amount_minor=load_minor,
                on_refusal=lambda: _restore_fee(session, company_id, row),
                leased=reservation is not None,
            )
        # The card as `complete_movement` re-read it under its lock.
        card = await complete_movement(session, card, row, movement, reservation)
        # Not a commit of its own: the answer is stored with the posting. A crash before that
        # resumes at `reserved`, finds the funding completed and goes on from here.
        idempotency.reached(claim, LOADED)
    if (
        row.fee_paid_minor
        and card.status == CardStatus.SYSTEM_BLOCKED
        and card.outstanding_fee_minor == 0
    ):
        await unblock(session, providers, card)
    return Funded(row, card)


async def _reserve_topup(
    session: AsyncSession,
    claim: Claim,
    card: Card,
    money: Money,
    kind: FundingKind,
    trigger: str | None,
    lease_until: datetime,
    source: CompanyAccount = CompanyAccount.MASTER,
    short: type[ApiError] = MasterAccountShort,
) -> tuple[CardFunding, ledger.Reservation]:
    fee = 0
    if kind not in FEE_FREE:  # a fee-free kind needs no schedule
        schedule = await schedule_for(session, company_id=card.company_id, tier_id=card.tier_id)
        fee = await discounted_topup_fee(
            session,
            company_id=card.company_id,
            card_id=card.id,
            fee_minor=schedule.topup_fee(money.minor),
        )
    net = money.minor - fee
    paid = min(card.outstanding_fee_minor, net)
    if paid:  # else the card would be marked changed, and flushed for nothing
        card.outstanding_fee_minor -= paid
    load = net - paid
    master, revenue, account = await _funding_accounts(session, card, money.currency, source)
    key = claim.derived_key(LOAD_STEP)
    legs = [Leg(master.id, -money.minor)]
    if load:
        legs.append(Leg(account.id, load))
    if fee + paid:
        legs.append(Leg(revenue.id, fee + paid))
    try:
        reservation = await ledger.reserve(
            session,
            company_id=card.company_id,
            legs=legs,
            code="card.topup",
            expires_at=None,  # the provider's answer settles it
            reference=key,
            details={"cardId": card.id, "fee": fee, "declineFeePaid": paid},
            accounts=(master, revenue, account),
        )
    except ledger.InsufficientFunds:
        raise short() from None
    transfer_id = reservation.result.transfer_id
    row = await _record(
        session, card, kind, money, fee, key, transfer_id, paid, trigger, lease_until
    )
    return row, reservation


async def _record(
    session: AsyncSession,
    card: Card,
    kind: FundingKind,
    money: Money,
    fee: int,
    key: str,
    pending_id: int,
    fee_paid: int = 0,
    trigger: str | None = None,
    lease_until: datetime | None = None,
) -> CardFunding:
    """The `PENDING` funding; with `lease_until`, its provider call already leased to the
    request reserving it (no one else can see the row before that commits)."""
    return await FundingRepository(session, card.company_id).create(
        {
            "card_id": card.id,
            "kind": kind.value,
            "status": FundingStatus.PENDING.value,
            "currency": money.currency,
            "amount_minor": money.minor,
            "fee_minor": fee,
            "fee_paid_minor": fee_paid,
            "provider_key": key,
            "ledger_pending_id": pending_id,
            "trigger": trigger,
            "provider_call_until": lease_until,
        }
    )


async def _restore_fee(session: AsyncSession, company_id: int, row: CardFunding) -> None:
    if row.fee_paid_minor:
        card = await find_card(session, company_id=company_id, card_id=row.card_id, lock=True)
        card.outstanding_fee_minor += row.fee_paid_minor


async def _move(
    session: AsyncSession,
    providers: Providers,
    program: CardProgram,
    claim: Claim,
    card: Card,
    row: CardFunding,
    *,
    load: bool,
    amount_minor: int,
    on_refusal: Callable[[], Awaitable[None]] | None = None,
    leased: bool = False,
) -> CardMovement | None:
    """The provider call (no lock held); a refusal voids the reservation and is final.

    One caller at a time (`_take_provider_call`, or `leased` when the reservation took the
    lease): None when another has completed the movement meanwhile; `FundingFailed` when
    another found it refused; `FundingInProgress` (503) while another is still asking."""
    company_id = card.company_id
    card_ref, key = provider_card_id(card), row.provider_key
    if not leased and not await _take_provider_call(session, providers.policy, row):
        await _decided_elsewhere(session, row)
        return None  # completed by the other caller
    try:
        try:
            return await commit_then_call(
                session,
                providers.policy,
                provider=card.provider,
                operation="load" if load else "unload",
                call=lambda: (program.load if load else program.unload)(
                    company_id=company_id,
                    card_id=card_ref,
                    idempotency_key=key,
                    amount_minor=amount_minor,
                ),
                idempotent=True,
            )
        except ProviderRejected as refusal:
            # A refusal is final only when the provider made nothing under the key: it may
            # check the card before its keys and refuse a repeat (the card frozen, or short,
            # since) of a movement it made on a call whose answer was lost; voiding that
            # reservation would leave the ledger apart from the provider.
            made = await movement_under_key(
                session, providers, program, company_id=company_id, key=key
            )
            if made is not None:
                return made
            await _refused(session, row, on_refusal)
            answer = _as_answer(refusal)
            error = {"status": answer.status, "code": answer.code, "message": answer.message}
            await idempotency.checkpoint(session, claim, REJECTED, error=error)
            if answer is refusal:
                raise
            raise answer from refusal
    except ProviderUnavailable:
        # The outcome is unknown and the movement stays pending: a retry may ask at once.
        await _end_provider_call(session, row)
        raise


async def movement_under_key(
    session: AsyncSession | None,
    providers: Providers,
    program: CardProgram,
    *,
    company_id: int,
    key: str,
) -> CardMovement | None:
    """The movement the provider made under `key` (it deduplicates by it), if any."""
    return await commit_then_call(
        session,
        providers.policy,
        provider=program.name,
        operation="movement_by_key",
        call=lambda: program.movement_by_key(company_id=company_id, idempotency_key=key),
        idempotent=True,
    )


async def _refused(
    session: AsyncSession, row: CardFunding, on_refusal: Callable[[], Awaitable[None]] | None
) -> None:
    """Void the reservation of a movement the provider refused (and did not make)."""
    assert row.ledger_pending_id is not None
    # The card row before the ledger accounts (see `complete_movement`); a parallel
    # resumption may have settled the movement meanwhile: void only what is still pending.
    await find_card(session, company_id=row.company_id, card_id=row.card_id, lock=True)
    if await _still_pending(session, row):
        await ledger.void_pending(
            session, company_id=row.company_id, pending_id=row.ledger_pending_id
        )
        row.status = FundingStatus.FAILED.value
        if on_refusal is not None:
            await on_refusal()


async def _take_provider_call(session: AsyncSession, policy: CallPolicy, row: CardFunding) -> bool:
    """Lease the provider call of a pending funding, committed by the call that follows.

    Without it, a settlement (a cancellation's, reconciliation's) could ask the provider
    under the same key just after the request that made the funding was refused and before
    it recorded the refusal; a provider that accepted the second call (money having arrived
    meanwhile) would move money the ledger has released. The lease outlasts the longest
    call twice over, so a caller that dies mid-call holds it no longer than that."""
    return await FundingRepository(session, row.company_id).take_provider_call(
        row.id, pending=FundingStatus.PENDING.value, now=utcnow(), until=_lease_end(policy)
    )


def _lease_end(policy: CallPolicy) -> datetime:
    return utcnow() + timedelta(seconds=2 * policy.longest_call_seconds)


async def _end_provider_call(session: AsyncSession, row: CardFunding) -> None:
    await FundingRepository(session, row.company_id).end_provider_call(row.id)
    await session.commit()


async def _decided_elsewhere(session: AsyncSession, row: CardFunding) -> None:
    if await _still_pending(session, row):
        raise FundingInProgress()
    if row.status == FundingStatus.FAILED:
        raise FundingFailed()


def _as_answer(refusal: ProviderRejected) -> ApiError:
    """What the partner is told of a provider's refusal: a card the provider holds too little
    for is the same 409 as one the ledger holds too little for."""
    if isinstance(refusal, CardFundsShort):
        return InsufficientCardBalance(
            "The card provider holds less for the card than that; a purchase may not have "
            "reached the platform yet."
        )
    if isinstance(refusal, CardUnknownAtProvider):
        # The card has a provider id, so the provider issued it: it has closed it since
        # (a cancellation racing this movement, or its own), and nothing moved.
        return CardCancelled(
            "The card provider has cancelled the card: it accepts no further money."
        )
    return refusal


async def complete_movement(
    session: AsyncSession,
    card: Card,
    row: CardFunding,
    movement: CardMovement | None,
    reservation: ledger.Reservation | None = None,
) -> Card:
    """Post the movement's reservation (unless a parallel resumption did); the card, re-read
    under its row lock. `reservation`: the ledger's pending transfer as this request made it."""
    assert row.ledger_pending_id is not None
    # The card row first, then the ledger accounts: the order every card money path locks in
    # (reversed, parallel requests on one card deadlock).
    card = await find_card(session, company_id=card.company_id, card_id=card.id, lock=True)
    now = utcnow()
    movement_id = None if movement is None else movement.movement_id
    if not await FundingRepository(session, row.company_id).complete_if_pending(
        row.id,
        pending=FundingStatus.PENDING.value,
        completed=FundingStatus.COMPLETED.value,
        movement_id=movement_id,
        now=now,
    ):
        await session.refresh(row)
        return card  # a parallel resumption of the same movement completed it
    await ledger.post_pending(
        session,
        company_id=card.company_id,
        pending_id=row.ledger_pending_id,
        reservation=reservation,
    )
    # What the statement above wrote, without writing it again.
    set_committed_value(row, "status", FundingStatus.COMPLETED.value)
    set_committed_value(row, "completed_at", now)
    set_committed_value(row, "updated_at", now)
    if movement_id is not None:
        set_committed_value(row, "provider_movement_id", movement_id)
    if movement is not None:
        card.last_balance_minor = movement.balance_minor
    await CardRepository(session, card.company_id).save(card)
    return card


async def _still_pending(session: AsyncSession, row: CardFunding) -> bool:
    """Re-read the funding's status (call with the card row locked); refreshes `row` when
    another request has resolved it."""
    current = await FundingRepository(session, row.company_id).status_of(row.id)
    if current == FundingStatus.PENDING:
        return True
    await session.refresh(row)
    return False


async def unblock(session: AsyncSession, providers: Providers, card: Card) -> Card:
    """The outstanding decline fee is paid: the provider unblocks the card. Its answer is
    taken like any control's (`take_control_answer`): a fee owed again meanwhile keeps the
    block, and the answer's time keeps an older control's late answer from undoing it."""
    company_id, card_id = card.company_id, card.id
    changed = await change_at_provider(session, providers, card, CardAction.UNBLOCK)
    fresh = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
    take_control_answer(fresh, changed)
    return fresh


# ---------------------------------------------------------------------------------- unload


async def unload(
    session: AsyncSession,
    providers: Providers,
    *,
    claim: Claim,
    company_id: int,
    card_id: int,
    money: Money,
    trigger: str | None = None,
) -> Funded:
    if claim.recovery_point == idempotency.STARTED:
        card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
        _check_accepts_money(card, money.currency)
        program_of(providers, card)
        provider_card_id(card)
        schedule = await schedule_for(session, company_id=company_id, tier_id=card.tier_id)
        fee = schedule.unload_fee(money.minor)
        master, revenue, account = await _funding_accounts(session, card, money.currency)
        key = claim.derived_key("card-unload")
        legs = [Leg(account.id, -money.minor)]
        if money.minor - fee:
            legs.append(Leg(master.id, money.minor - fee))
        if fee:
            legs.append(Leg(revenue.id, fee))
        try:
            made = await ledger.reserve(
                session,
                company_id=company_id,
                legs=legs,
                code="card.unload",
                expires_at=None,
                reference=key,
                details={"cardId": card.id, "fee": fee},
                require_available=True,
                accounts=(master, revenue, account),
            )
        except ledger.InsufficientFunds:
            raise InsufficientCardBalance(
                "The card does not hold that much available.",
                validation_errors={"Value": ["More than the card's available balance."]},
            ) from None
        row = await _record(
            session,
            card,
            FundingKind.UNLOAD,
            money,
            fee,
            key,
            made.result.transfer_id,
            0,
            trigger,
            _lease_end(providers.policy),
        )
        reservation: ledger.Reservation | None = made
        await idempotency.checkpoint(session, claim, RESERVED, funding_id=row.id)
    else:
        row = await _resume(session, claim, company_id)
        card = await find_card(session, company_id=company_id, card_id=row.card_id)
        reservation = None
    if row.status == FundingStatus.PENDING:
        program = program_of(providers, card)
        movement = await _move(
            session,
            providers,
            program,
            claim,
            card,
            row,
            load=False,
            amount_minor=row.amount_minor,
            # A decline fee collected at cancellation is owed again if the provider refuses.
            on_refusal=lambda: _restore_fee(session, company_id, row),
            leased=reservation is not None,
        )
        await complete_movement(session, card, row, movement, reservation)
    return Funded(row, card)


# ---------------------------------------------------------------------- uncertain outcomes


async def settle_pending(
    session: AsyncSession,
    providers: Providers,
    *,
    company_id: int,
    card_id: int,
    created_before: datetime | None = None,
) -> None:
    """Settle the card's fundings left `PENDING` by a provider timeout or outage.

    Each is resumed under its own provider key, so the provider confirms the movement it made
    (posted), makes it now (posted) or refuses it (voided, `FAILED`; a fee it paid is owed
    again). Never a guess: a provider still not answering raises 503 and the funding stays
    pending. Safe alongside a retry of the original request (the provider deduplicates the
    key, and only one of them resolves the reservation)."""
    pending = await FundingRepository(session, company_id).of_card_in_status(
        card_id, FundingStatus.PENDING.value, created_before=created_before
    )
    for funding_id, kind, amount_minor, currency in pending:
        claim = Claim(
            company_id=company_id,
            key=f"settle:{funding_id}",
            token="",
            recovery_point=RESERVED,
            state={"funding_id": funding_id},
        )
        move = topup if kind in LOADS else unload
        try:
            await move(
                session,
                providers,
                claim=claim,
                company_id=company_id,
                card_id=card_id,
                money=Money(amount_minor, currency),
            )
        except (ProviderRejected, FundingFailed, InsufficientCardBalance):
            continue  # refused: the reservation is released, the funding FAILED
        except FundingInProgress:
            continue  # its own request is asking the provider; it settles it


async def cards_with_pending(session: AsyncSession, *, company_id: int) -> list[int]:
    """Cards of the company with a funding still `PENDING` (for `settle_pending`)."""
    return await FundingRepository(session, company_id).cards_in_status(FundingStatus.PENDING.value)


# ------------------------------------------------------------------------- cancellation


async def unload_for_cancellation(session: AsyncSession, providers: Providers, card: Card) -> None:
    """Return the card's available balance to the company master account (an ordinary unload,
    with the tier's unload fee) before the card is cancelled. Safe to repeat: fundings left
    pending (a provider timeout, this unload's included) are settled first under their own
    keys, and money that arrived since gets a new unload."""
    company_id, card_id = card.company_id, card.id
    await settle_pending(session, providers, company_id=company_id, card_id=card_id)
    card = await find_card(session, company_id=company_id, card_id=card_id, lock=True)
    if card.status == CardStatus.CANCELLED or card.provider_card_id is None:
        return
    earlier = await cancellation_fundings(session, card, FundingKind.UNLOAD)
    account = await card_account(session, card)
    held = await ledger.balance_of(session, account)
    if held.available <= 0:
        return
    await unload(
        session,
        providers,
        claim=Claim(company_id=company_id, key=f"card-cancel:{card_id}:{earlier}", token=""),
        company_id=company_id,
        card_id=card_id,
        money=Money(held.available, card.currency),
        trigger=CANCELLATION,
    )


async def cancellation_fundings(session: AsyncSession, card: Card, kind: FundingKind) -> int:
    """How many fundings of `kind` earlier cancellation attempts of the card made (the next
    one's key must differ from theirs)."""
    return await FundingRepository(session, card.company_id).count_of_card(
        card.id, kind=kind.value, trigger=CANCELLATION
    )
