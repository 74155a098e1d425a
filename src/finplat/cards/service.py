"""The card lifecycle: order, read, list, controls and cancellation.

Every provider call goes through `commit_then_call` (which commits first: nothing is locked
across it); local state is written after the provider answered. The platform never sees the
full card number or CVV, and never keeps or logs a PIN (only `pin_set`).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts as banking_accounts
from finplat.cards import cancellation, timestamps
from finplat.cards.funding import decline_fees
from finplat.cards.funding import service as funding
from finplat.cards.models import Card
from finplat.cards.repository import CardRepository, user_of_another_company
from finplat.cards.schemas import PHYSICAL_DESIGNS, CardOrder
from finplat.cards.status import PROVIDER_STATUS, CardStatus
from finplat.errors import ApiError, Conflict, NotFound, Unauthorized
from finplat.idempotency.service import Claim
from finplat.kit.clock import utcnow
from finplat.kit.money import from_minor
from finplat.kyc.approval import require_base_approval
from finplat.ledger import repository as ledger_repository
from finplat.ledger import service as ledger
from finplat.providers.calls import commit_then_call
from finplat.providers.cards.port import (
    CardAction,
    CardProgram,
    DeliveryAddress,
    ProviderCard,
    ProviderCardStatus,
    ProviderCardTransaction,
    WidgetSession,
)
from finplat.providers.errors import ProviderRejected
from finplat.providers.names import BankProvider
from finplat.providers.registry import Providers
from finplat.provisioning import card_accounts, statuses
from finplat.provisioning import service as provisioning
from finplat.tiers.repository import CardProductRepository
from finplat.users import service as users

T = TypeVar("T")
WIDGET_TTL_SECONDS = 60
S = CardStatus


# ------------------------------------------------------------------------------------ errors


class CardTypeNotFound(NotFound):
    code = "CARD_TYPE_NOT_FOUND"
    message = "No card product with that CardTypeId."


class UserOfAnotherCompany(Unauthorized):
    code = "USER_OUTSIDE_COMPANY"
    message = "The user does not belong to the authenticated company."


class CardRuleConflict(Conflict):
    code = "CARD_ORDER_CONFLICT"


def _conflict(code: str, message: str) -> ApiError:
    return CardRuleConflict(message, code=code)


class CardSystemBlocked(Conflict):
    code = "CARD_SYSTEM_BLOCKED"
    message = "The card is blocked until its outstanding decline fee is paid."


class CardStateConflict(Conflict):
    code = "CARD_STATE_CONFLICT"


class CardControlSuperseded(Conflict):
    """A control the provider applied and then overtook with a later change to the card
    before its answer came back: the card is not as the request asked."""

    code = "CARD_CONTROL_SUPERSEDED"


class PinTooSimple(Conflict):
    code = "CARD_PIN_TOO_SIMPLE"
    message = "The PIN is too easy to guess: no six equal digits and no consecutive run."


# ------------------------------------------------------------------------------------ helpers


def _state(card: Card, message: str) -> CardStateConflict:
    return CardStateConflict(f"{message} (the card is {card.status}).")


def _superseded(card: Card, control: str, now: str) -> CardControlSuperseded:
    return CardControlSuperseded(
        f"A later change to the card decided its state: {now}. This {control} did not take "
        "effect; send it again if it is still wanted.",
        details=json.dumps({"status": card.status, "autoLockEnabled": card.auto_lock_enabled}),
    )


async def holder_account_id(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int, provider: str
) -> str:
    """The user's account at the card's provider (opened for the first card if needed)."""
    if provider == BankProvider.BANKPROV.value:
        account = await banking_accounts.banking_account(
            session, company_id=company_id, user_id=user_id
        )
    else:
        ensure = (
            card_accounts.provision_card_account
            if provider == BankProvider.CARDPROV.value
            else card_accounts.ensure_switch_link
        )
        account = (await ensure(session, providers, company_id=company_id, user_id=user_id)).account
        if account.status != statuses.APPROVED or account.provider_account_id is None:
            raise _conflict(
                "CARD_PROVIDER_ACCOUNT_NOT_APPROVED",
                f"The user's {provider} account is not approved yet ({account.status}).",
            )
    assert account.provider_account_id is not None
    return account.provider_account_id


def pin_too_simple(pin: str) -> bool:
    """Six equal digits, or six consecutive digits going up or down (wrapping not allowed)."""
    if len(set(pin)) == 1:
        return True
    steps = {int(b) - int(a) for a, b in itertools.pairwise(pin)}
    return steps in ({1}, {-1})


# ------------------------------------------------------------------------------------- order


async def order(
    session: AsyncSession, providers: Providers, *, claim: Claim, company_id: int, body: CardOrder
) -> Card:
    user = await require_base_approval(session, company_id=company_id, user_id=body.UserId)
    product = await CardProductRepository(session, company_id).get(body.CardTypeId)
    if product is None:
        raise CardTypeNotFound()
    if product.tier_id != user.tier_id:
        raise _conflict(
            "CARD_TYPE_NOT_IN_TIER", "The card product does not belong to the user's tier."
        )
    provider = product.provider
    if provider == BankProvider.BANKPROV.value:
        if body.BudgetId is None:
            raise _conflict("CARD_BUDGET_REQUIRED", "Banking-provider cards need a BudgetId.")
        budget = await banking_accounts.user_budget(
            session, company_id=company_id, user_id=user.id, budget_id=body.BudgetId
        )
        provider_budget_id: str | None = budget.provider_budget_id
    else:
        if body.BudgetId is not None:
            raise _conflict(
                "CARD_BUDGET_NOT_ALLOWED", "Only banking-provider cards draw on a budget."
            )
        provider_budget_id = None
    if product.card_type == "PHYSICAL":
        if body.DeliveryAddress is None:
            raise _conflict(
                "CARD_DELIVERY_ADDRESS_REQUIRED", "Physical cards need a DeliveryAddress."
            )
        if body.DesignId is None or body.DesignId.value not in PHYSICAL_DESIGNS:
            raise _conflict(
                "CARD_DESIGN_REQUIRED",
                f"Physical cards need a DesignId: one of {', '.join(PHYSICAL_DESIGNS)}.",
            )
    elif body.DesignId is not None or body.DeliveryAddress is not None:
        raise _conflict(
            "CARD_DESIGN_NOT_OFFERED", "Virtual cards take no DesignId and no DeliveryAddress."
        )
    if body.Currency is not None and body.Currency.value != product.currency:
        raise _conflict(
            "CARD_CURRENCY_MISMATCH", f"The card product is issued in {product.currency}."
        )
    key = claim.derived_key("card-order")
    repo = CardRepository(session, company_id)
    existing = await repo.by_provider_key(provider, key)
    if existing is not None:
        return existing
    holder = await holder_account_id(
        session, providers, company_id=company_id, user_id=user.id, provider=provider
    )
    program = funding.program_for(providers, provider)
    address = (
        DeliveryAddress(
            name=body.DeliveryAddress.Name,
            line1=body.DeliveryAddress.Line1,
            line2=body.DeliveryAddress.Line2,
            city=body.DeliveryAddress.City,
            postal_code=body.DeliveryAddress.PostalCode,
            country=body.DeliveryAddress.Country,
            state=body.DeliveryAddress.State,
        )
        if body.DeliveryAddress is not None
        else None
    )
    card_type, currency, nickname = product.card_type, product.currency, body.CardName
    design = body.DesignId.value if body.DesignId is not None else None
    issued = await commit_then_call(
        session,
        providers.policy,
        provider=provider,
        operation="issue_card",
        call=lambda: program.issue_card(
            company_id=company_id,
            idempotency_key=key,
            holder_account_id=holder,
            card_type=card_type,
            currency=currency,
            nickname=nickname,
            budget_id=provider_budget_id,
            delivery_address=address,
            design_id=design,
        ),
        idempotent=True,
    )
    if body.AutoLockEnabled:
        issued_ref = issued.card_id
        await commit_then_call(
            session,
            providers.policy,
            provider=provider,
            operation="set_auto_lock",
            call=lambda: program.set_auto_lock(
                company_id=company_id, card_id=issued_ref, enabled=True
            ),
            idempotent=True,
        )
    existing = await repo.by_provider_key(provider, key)
    if existing is not None:
        return existing
    card = await repo.add(
        Card(
            user_id=user.id,
            card_product_id=product.id,
            tier_id=product.tier_id,
            provider=provider,
            provider_key=key,
            provider_card_id=issued.card_id,
            external_card_id=body.ExternalCardId,
            nickname=nickname,
            card_type=card_type,
            status=PROVIDER_STATUS[issued.status].value,
            currency=currency,
            auto_lock_enabled=body.AutoLockEnabled,
            budget_id=body.BudgetId,
            masked_number=issued.masked_number,
            last4=issued.last4,
            expiry_month=issued.expiry_month,
            expiry_year=issued.expiry_year,
            phone=body.Phone,
            delivery_address=json.dumps(asdict(address)) if address else None,
            design_id=design,
            last_balance_minor=issued.balance_minor,
        )
    )
    await funding.card_account(session, card)
    await session.flush()
    return card


# -------------------------------------------------------------------------------------- read


@dataclass(frozen=True)
class CardView:
    card: Card
    available: Decimal
    posted: Decimal


async def views(session: AsyncSession, cards: list[Card]) -> list[CardView]:
    ids = [c.ledger_account_id for c in cards if c.ledger_account_id is not None]
    totals: dict[int, ledger.Balance] = {}
    if ids:
        company_id = cards[0].company_id
        accounts = await ledger_repository.accounts_by_id(
            session, company_id=company_id, account_ids=ids
        )
        for balance in await ledger.balances(
            session, company_id=company_id, accounts=list(accounts.values())
        ):
            totals[balance.account_id] = balance
    found = []
    for card in cards:
        found_balance = totals.get(card.ledger_account_id or 0)
        available = found_balance.available if found_balance else card.last_balance_minor
        posted = found_balance.posted if found_balance else card.last_balance_minor
        found.append(
            CardView(
                card,
                from_minor(available, card.currency),
                from_minor(posted, card.currency),
            )
        )
    return found


async def user_card(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    card_id: int,
    lock: bool = False,
    outsider_401: bool = False,
) -> Card:
    """The user's card: 404 for a missing user or card. With `outsider_401` (card detail,
    per spec), a user of another company is 401 instead."""
    try:
        await users.get_user(session, company_id=company_id, user_id=user_id)
    except NotFound:
        if outsider_401 and await user_of_another_company(
            session, company_id=company_id, user_id=user_id
        ):
            raise UserOfAnotherCompany() from None
        raise
    return await funding.find_card(
        session, company_id=company_id, card_id=card_id, user_id=user_id, lock=lock
    )


def _adopt(card: Card, seen: ProviderCard) -> None:
    """What the provider reports: balance and, for a card still waiting for production, its
    produced status (in case its callback has not arrived yet)."""
    card.last_balance_minor = seen.balance_minor
    if card.status == S.PENDING and seen.status in (
        ProviderCardStatus.ACTIVE,
        ProviderCardStatus.INACTIVE,
    ):
        card.status = PROVIDER_STATUS[seen.status].value


async def detail(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int, card_id: int
) -> CardView:
    card = await user_card(
        session, company_id=company_id, user_id=user_id, card_id=card_id, outsider_401=True
    )
    if card.status != S.CANCELLED and card.provider_card_id is not None:
        local_id = card.id
        seen = await funding.provider_view(session, providers, card)
        card = await user_card(
            session, company_id=company_id, user_id=user_id, card_id=local_id, lock=True
        )
        if seen is not None:
            _adopt(card, seen)
            await session.flush()
    return (await views(session, [card]))[0]


async def list_cards(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int
) -> list[CardView]:
    """Every local card of the user; what the providers still list refreshes the persisted
    balance, and cards they omit (cancelled ones, banking-provider cards kept locally) show
    their persisted details."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    repo = CardRepository(session, company_id)
    cards = await repo.list_of_user(user_id)
    for provider in sorted({c.provider for c in cards if c.status != S.CANCELLED}):
        account = await provisioning.find(
            session, company_id=company_id, user_id=user_id, provider=BankProvider(provider)
        )
        if account is None or account.provider_account_id is None:
            continue
        program, holder = funding.program_for(providers, provider), account.provider_account_id
        listed = await commit_then_call(
            session,
            providers.policy,
            provider=provider,
            operation="list_cards",
            call=lambda program=program, holder=holder: program.list_cards(  # type: ignore[misc]
                company_id=company_id, holder_account_id=holder
            ),
            idempotent=True,
        )
        by_ref = {c.card_id: c for c in listed}
        for card in await repo.list_of_user(user_id):
            if card.provider == provider and card.provider_card_id in by_ref:
                _adopt(card, by_ref[card.provider_card_id])
        await session.flush()
    return await views(session, await repo.list_of_user(user_id))


async def card_transactions(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int, card_id: int
) -> tuple[Card, list[ProviderCardTransaction]]:
    card = await user_card(session, company_id=company_id, user_id=user_id, card_id=card_id)
    if card.provider_card_id is None:
        return card, []
    program, ref = funding.program_of(providers, card), card.provider_card_id
    try:
        found = await commit_then_call(
            session,
            providers.policy,
            provider=card.provider,
            operation="card_transactions",
            call=lambda: program.transactions(company_id=company_id, card_id=ref),
            idempotent=True,
        )
    except ProviderRejected as exc:
        if exc.status != 404:
            raise
        found = []
    return card, found


parse_timestamp = timestamps.parse


# ---------------------------------------------------------------------------------- controls


async def _at_provider(
    session: AsyncSession,
    providers: Providers,
    card: Card,
    operation: str,
    call: Callable[[CardProgram, str], Awaitable[T]],
) -> tuple[T, Card]:
    """One control at the card's provider (`call(program, provider card id)`, no lock held
    across it), then the card re-read under its row lock for the local write."""
    ref = card.provider_card_id
    if ref is None:
        raise _state(card, "The provider has not issued the card yet")
    program = funding.program_of(providers, card)
    company_id, user_id, card_id = card.company_id, card.user_id, card.id
    answer = await commit_then_call(
        session,
        providers.policy,
        provider=card.provider,
        operation=operation,
        call=lambda: call(program, ref),
        idempotent=True,
    )
    fresh = await user_card(
        session, company_id=company_id, user_id=user_id, card_id=card_id, lock=True
    )
    return answer, fresh


# What the partner asked for with each status change: its control and the status wanted.
_ASKED = {
    CardAction.FREEZE: ("freeze", S.FROZEN),
    CardAction.UNFREEZE: ("enable", S.ACTIVE),
    CardAction.ACTIVATE: ("activation", S.ACTIVE),
    CardAction.UNBLOCK: ("enable", S.ACTIVE),
}


async def _change(
    session: AsyncSession, providers: Providers, card: Card, action: CardAction
) -> Card:
    """Change the card's status at its provider. An answer overtaken by a later change to the
    card (`funding.take_control_answer`) is 409 `CARD_CONTROL_SUPERSEDED` unless the card is
    in the status asked all the same: the partner must not read 200 as "frozen" for a card
    the later change left active."""
    company_id = card.company_id
    changed, fresh = await _at_provider(
        session,
        providers,
        card,
        "change_status",
        lambda program, ref: program.change_status(
            company_id=company_id, card_id=ref, action=action
        ),
    )
    control, wanted = _ASKED[action]
    if not funding.take_control_answer(fresh, changed) and fresh.status != wanted:
        raise _superseded(fresh, control, f"the card is {fresh.status}")
    await session.flush()
    return fresh


async def freeze(session: AsyncSession, providers: Providers, card: Card) -> Card:
    """An active card becomes `FROZEN`. A card frozen here is frozen again at the provider
    too: an enable on its way there may have made it active already, and only the provider's
    answer orders the two (`_change`)."""
    card.refuse_if_cancelled()
    if card.status not in (S.ACTIVE, S.FROZEN):
        raise _state(card, "Only an active card can be frozen")
    return await _change(session, providers, card, CardAction.FREEZE)


async def enable(session: AsyncSession, providers: Providers, card: Card) -> Card:
    """A frozen card becomes `ACTIVE` and an auto-locked one is unlocked. A card active here
    is enabled at the provider too (a freeze on its way there may have frozen it already),
    which also unlocks it; a system-blocked card only once its decline fee is paid."""
    card.refuse_if_cancelled()
    if card.status == S.SYSTEM_BLOCKED:
        if card.outstanding_fee_minor > 0:
            raise CardSystemBlocked()
        return await _change(session, providers, card, CardAction.UNBLOCK)
    if card.status not in (S.ACTIVE, S.FROZEN):
        raise _state(card, "Only a frozen card can be enabled")
    return await _change(session, providers, card, CardAction.UNFREEZE)


async def activate(session: AsyncSession, providers: Providers, card: Card) -> Card:
    card.refuse_if_cancelled()
    if card.card_type != "PHYSICAL":
        raise _state(card, "Only physical cards are activated")
    if card.status == S.ACTIVE:
        return card
    if card.status != S.INACTIVE:
        raise _state(card, "Only a delivered physical card awaiting activation can be activated")
    card = await _change(session, providers, card, CardAction.ACTIVATE)
    card.activated_at = utcnow()
    return card


async def set_pin(session: AsyncSession, providers: Providers, card: Card, pin: str) -> Card:
    card.refuse_if_cancelled()
    if card.status == S.PENDING:
        raise _state(card, "The card is not issued yet")
    if pin_too_simple(pin):
        raise PinTooSimple()
    company_id = card.company_id
    _, fresh = await _at_provider(
        session,
        providers,
        card,
        "set_pin",
        lambda program, ref: program.set_pin(company_id=company_id, card_id=ref, pin=pin),
    )
    fresh.pin_set = True
    fresh.updated_at = utcnow()
    await session.flush()
    return fresh


async def set_auto_lock(
    session: AsyncSession, providers: Providers, card: Card, enabled: bool
) -> Card:
    """The provider enforces auto-lock (it locks the card after each approved purchase and
    declines `AUTO_LOCKED` until `enable`); the platform keeps the flag as the provider's
    answer gives it, ordered with the answers to the card's other controls
    (`funding.take_control_answer`), so a slow answer never undoes a later setting. A setting
    so overtaken is 409 `CARD_CONTROL_SUPERSEDED` when the card's auto-lock ended up
    otherwise."""
    card.refuse_if_cancelled()
    company_id = card.company_id
    answer, fresh = await _at_provider(
        session,
        providers,
        card,
        "set_auto_lock",
        lambda program, ref: program.set_auto_lock(
            company_id=company_id, card_id=ref, enabled=enabled
        ),
    )
    if not funding.take_control_answer(fresh, answer) and fresh.auto_lock_enabled != enabled:
        now = "auto-lock is on" if fresh.auto_lock_enabled else "auto-lock is off"
        raise _superseded(fresh, "auto-lock setting", now)
    await session.flush()
    return fresh


async def cancel(session: AsyncSession, providers: Providers, card: Card) -> Card:
    """Permanent cancellation, card-provider cards only; emits `card.deleted`. Fundings left
    pending by a provider timeout are settled first; an unpaid decline fee is collected from
    the card's balance (`decline_fees.collect_for_cancellation`); the rest of the balance goes
    back to the company master account (`funding.unload_for_cancellation`); money still held by
    a pending purchase keeps the card open (409 `CARD_BALANCE_NOT_ZERO`). Once the provider has
    cancelled the card, the fee it could not pay is written off (`decline_fees.write_off`),
    reported as `declineFeeWrittenOff` in `card.deleted`. A card the provider has cancelled
    already (an earlier attempt whose answer was lost) is finished as the provider's own
    cancellation is (`cancellation.apply_provider_cancellation`)."""
    card.refuse_if_cancelled()
    if card.provider != BankProvider.CARDPROV.value:
        raise _conflict(
            "CARD_CANCELLATION_NOT_SUPPORTED",
            "Only card-provider cards can be cancelled permanently.",
        )
    company_id, user_id, card_id = card.company_id, card.user_id, card.id
    if await _cancelled_at_provider(session, providers, card):
        # An earlier attempt's cancellation reached the provider but its answer was lost, or
        # the provider cancelled the card on its own and its report is still on the way. The
        # provider moves no money for the card any more (it returned what the card held to the
        # programme), so this finishes as its report would: what the ledger still holds,
        # money that reached the card since that earlier attempt's unload included, is booked
        # back without an unload fee.
        await cancellation.apply_provider_cancellation(
            session, company_id, card_id, cancelled_by=cancellation.CancelledBy.PARTNER
        )
        return await user_card(session, company_id=company_id, user_id=user_id, card_id=card_id)
    await decline_fees.collect_for_cancellation(session, providers, card)
    await funding.unload_for_cancellation(session, providers, card)
    # The provider has moved that money: its booking stands whatever this request answers
    # (a 409 below rolls back only what follows).
    await session.commit()
    card = await user_card(
        session, company_id=company_id, user_id=user_id, card_id=card_id, lock=True
    )
    card.refuse_if_cancelled()
    view = (await views(session, [card]))[0]
    if view.posted != 0 or view.available != 0:
        raise _conflict(
            "CARD_BALANCE_NOT_ZERO",
            "The card still holds money: a pending purchase, or a funding in flight or "
            "completed meanwhile. Try again once it has settled.",
        )
    if card.provider_card_id is None:
        raise _state(card, "The provider has not issued the card yet")
    await funding.change_at_provider(session, providers, card, CardAction.CANCEL)
    # Only now the fee is written off: a card the provider did not cancel still owes it (and
    # stays blocked). Recorded once, by whichever cancellation finds the card still open: a
    # parallel DELETE or the provider's report may have recorded it while the provider was
    # being asked. A funding that reached the card meanwhile went back to the programme with
    # the card (the provider's cancellation returns what a card holds): it is booked back.
    await cancellation.apply_provider_cancellation(
        session, company_id, card_id, cancelled_by=cancellation.CancelledBy.PARTNER
    )
    return await user_card(session, company_id=company_id, user_id=user_id, card_id=card_id)


async def _cancelled_at_provider(session: AsyncSession, providers: Providers, card: Card) -> bool:
    """Whether the provider has cancelled the card: it answers `CANCELLED`, or no longer
    exposes the card (`funding.provider_view`)."""
    if card.provider_card_id is None:
        return False
    seen = await funding.provider_view(session, providers, card)
    return seen is None or PROVIDER_STATUS[seen.status] == S.CANCELLED


async def widget(
    session: AsyncSession, providers: Providers, card: Card, *, base_url: str
) -> WidgetSession:
    card.refuse_if_cancelled()
    if card.status == S.PENDING or card.provider_card_id is None:
        raise _state(card, "The card is not issued yet")
    program, company_id, ref = (
        funding.program_of(providers, card),
        card.company_id,
        card.provider_card_id,
    )
    return await commit_then_call(
        session,
        providers.policy,
        provider=card.provider,
        operation="widget",
        call=lambda: program.widget(
            company_id=company_id, card_id=ref, ttl_seconds=WIDGET_TTL_SECONDS, base_url=base_url
        ),
        idempotent=False,
    )
