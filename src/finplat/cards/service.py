"""The card lifecycle: order, read, list, cancellation and the secure widget (controls are
`finplat.cards.controls`, money `finplat.cards.funding`).

Every provider call goes through `commit_then_call` (which commits first: nothing is locked
across it); local state is written after the provider answered. The platform never sees the
full card number or CVV, and never keeps or logs a PIN (only `pin_set`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from decimal import Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking import accounts as banking_accounts
from finplat.cards import cancellation, programs, timestamps
from finplat.cards.errors import (
    CardBalanceNotZero,
    CardBudgetNotAllowed,
    CardBudgetRequired,
    CardCancellationNotSupported,
    CardDeliveryAddressRequired,
    CardDesignNotOffered,
    CardDesignRequired,
    CardProductCurrencyMismatch,
    CardProviderAccountNotApproved,
    CardStateConflict,
    CardTypeNotFound,
    CardTypeNotInTier,
)
from finplat.cards.funding import decline_fees
from finplat.cards.funding import service as funding
from finplat.cards.lookup import user_card
from finplat.cards.models import Card
from finplat.cards.repository import CardRepository
from finplat.cards.schemas import PHYSICAL_DESIGNS, CardOrder
from finplat.cards.status import PROVIDER_STATUS, CardStatus
from finplat.idempotency.service import Claim
from finplat.kit.money import from_minor
from finplat.kyc.approval import require_base_approval
from finplat.ledger import service as ledger
from finplat.providers.calls import commit_then_call
from finplat.providers.cards.port import (
    CardAction,
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
from finplat.users.models import User

WIDGET_TTL_SECONDS = 60
S = CardStatus


async def holder_account_id(
    session: AsyncSession, providers: Providers, *, user: User, provider: str
) -> str:
    """The account at the card's provider of a user whose base KYC is approved and whose tier
    offers the card (opened for the first card if needed)."""
    company_id = user.company_id
    if provider == BankProvider.BANKPROV.value:
        account = await banking_accounts.banking_account(
            session, company_id=company_id, user_id=user.id
        )
    else:
        ensure = (
            card_accounts.provision_card_account
            if provider == BankProvider.CARDPROV.value
            else card_accounts.ensure_switch_link
        )
        provisioned = await ensure(
            session, providers, company_id=company_id, user_id=user.id, offered_to=user
        )
        account = provisioned.account
        if account.status != statuses.APPROVED or account.provider_account_id is None:
            raise CardProviderAccountNotApproved(provider, account.status)
    assert account.provider_account_id is not None
    return account.provider_account_id


# ------------------------------------------------------------------------------------- order


async def order(
    session: AsyncSession, providers: Providers, *, claim: Claim, company_id: int, body: CardOrder
) -> CardView:
    """A card of a product of the user's tier, ordered at the product's provider once per
    idempotency key (the provider issues once per key; the card is written once, its key
    unique), for a user whose base KYC is approved and whose account at that provider is
    approved; a new card's ledger account is opened with it."""
    user = await require_base_approval(session, company_id=company_id, user_id=body.UserId)
    product = await CardProductRepository(session, company_id).get(body.CardTypeId)
    if product is None:
        raise CardTypeNotFound()
    if product.tier_id != user.tier_id:
        raise CardTypeNotInTier()
    provider = product.provider
    if provider == BankProvider.BANKPROV.value:
        if body.BudgetId is None:
            raise CardBudgetRequired()
        budget = await banking_accounts.user_budget(
            session, company_id=company_id, user_id=user.id, budget_id=body.BudgetId
        )
        provider_budget_id: str | None = budget.provider_budget_id
    else:
        if body.BudgetId is not None:
            raise CardBudgetNotAllowed()
        provider_budget_id = None
    if product.card_type == "PHYSICAL":
        if body.DeliveryAddress is None:
            raise CardDeliveryAddressRequired()
        if body.DesignId is None or body.DesignId.value not in PHYSICAL_DESIGNS:
            raise CardDesignRequired(PHYSICAL_DESIGNS)
    elif body.DesignId is not None or body.DeliveryAddress is not None:
        raise CardDesignNotOffered()
    if body.Currency is not None and body.Currency.value != product.currency:
        raise CardProductCurrencyMismatch(product.currency)
    key = claim.derived_key("card-order")
    repo = CardRepository(session, company_id)
    if claim.resumed:  # a batch resumed after a failure: the cards it made are found again
        made = await _ordered_before(session, repo, provider, key)
        if made is not None:
            return made
    holder = await holder_account_id(session, providers, user=user, provider=provider)
    program = programs.program_for(providers, provider)
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
    # The provider issues once per key: a request that lost its claim's lease to a retry (a
    # slow provider) is answered the card the retry wrote.
    card = await repo.create_unless_taken(
        {
            "user_id": user.id,
            "card_product_id": product.id,
            "tier_id": product.tier_id,
            "provider": provider,
            "provider_key": key,
            "provider_card_id": issued.card_id,
            "external_card_id": body.ExternalCardId,
            "nickname": nickname,
            "card_type": card_type,
            "status": PROVIDER_STATUS[issued.status].value,
            "currency": currency,
            "auto_lock_enabled": body.AutoLockEnabled,
            "budget_id": body.BudgetId,
            "masked_number": issued.masked_number,
            "last4": issued.last4,
            "expiry_month": issued.expiry_month,
            "expiry_year": issued.expiry_year,
            "phone": body.Phone,
            "delivery_address": json.dumps(asdict(address)) if address else None,
            "design_id": design,
            "last_balance_minor": issued.balance_minor,
        }
    )
    if card is None:
        made = await _ordered_before(session, repo, provider, key)
        assert made is not None
        return made
    await funding.open_card_account(session, card, new_card=True)
    await repo.save(card)
    nothing = from_minor(0, currency)  # a new card's account holds nothing yet
    return CardView(card, available=nothing, posted=nothing)


async def _ordered_before(
    session: AsyncSession, repo: CardRepository, provider: str, key: str
) -> CardView | None:
    """The card an earlier request ordered under this provider key, with its balance."""
    existing = await repo.by_provider_key(provider, key)
    return None if existing is None else (await views(session, [existing]))[0]


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
        totals = await ledger.balances_by_id(
            session, company_id=cards[0].company_id, account_ids=ids
        )
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
        seen = await programs.provider_view(session, providers, card)
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
    """Every local card of the user, its balance its ledger account's. A provider is asked
    for its cards only when it has something to tell: a card still waiting for production
    (its produced status, in case the callback has not arrived) or one without a ledger
    account (its balance is the provider's word, persisted); cards it omits (cancelled ones,
    banking-provider cards kept locally) show their persisted details. The cards are read
    once: the session keeps them across the provider's call (its commit expires nothing),
    and a read again would hand back the same objects unrefreshed."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    repo = CardRepository(session, company_id)
    cards = await repo.list_of_user(user_id)
    for provider in sorted({c.provider for c in cards if _provider_can_tell(c)}):
        account = await provisioning.find(
            session, company_id=company_id, user_id=user_id, provider=BankProvider(provider)
        )
        if account is None or account.provider_account_id is None:
            continue
        program, holder = programs.program_for(providers, provider), account.provider_account_id
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
        for card in cards:
            if card.provider == provider and card.provider_card_id in by_ref:
                _adopt(card, by_ref[card.provider_card_id])
        await session.flush()
    return await views(session, cards)


def _provider_can_tell(card: Card) -> bool:
    """Whether the provider's listing can change what a card shows (`list_cards`)."""
    if card.status == S.CANCELLED:
        return False
    return card.status == S.PENDING or card.ledger_account_id is None


async def card_transactions(
    session: AsyncSession, providers: Providers, *, company_id: int, user_id: int, card_id: int
) -> tuple[Card, list[ProviderCardTransaction]]:
    card = await user_card(session, company_id=company_id, user_id=user_id, card_id=card_id)
    if card.provider_card_id is None:
        return card, []
    program, ref = programs.program_of(providers, card), card.provider_card_id
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
        raise CardCancellationNotSupported()
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
        raise CardBalanceNotZero()
    if card.provider_card_id is None:
        raise CardStateConflict("The provider has not issued the card yet", card.status)
    await programs.change_at_provider(session, providers, card, CardAction.CANCEL)
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
    exposes the card (`programs.provider_view`)."""
    if card.provider_card_id is None:
        return False
    seen = await programs.provider_view(session, providers, card)
    return seen is None or PROVIDER_STATUS[seen.status] == S.CANCELLED


async def widget(
    session: AsyncSession, providers: Providers, card: Card, *, base_url: str
) -> WidgetSession:
    card.refuse_if_cancelled()
    if card.status == S.PENDING or card.provider_card_id is None:
        raise CardStateConflict("The card is not issued yet", card.status)
    program, company_id, ref = (
        programs.program_of(providers, card),
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
