"""A card's controls: freeze, enable, activation, PIN and auto-lock.

Each is applied at the provider first (no lock held across the call), then the card is re-read
under its row lock and takes the provider's answer, in the order the provider gave its answers
(`take_control_answer`).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.errors import (
    CardControlSuperseded,
    CardStateConflict,
    CardSystemBlocked,
    PinTooSimple,
)
from finplat.cards.lookup import user_card
from finplat.cards.models import Card
from finplat.cards.programs import program_of
from finplat.cards.status import PROVIDER_STATUS, CardStatus
from finplat.kit.clock import utcnow
from finplat.providers.calls import commit_then_call
from finplat.providers.cards.port import CardAction, CardProgram, ProviderCard
from finplat.providers.registry import Providers

T = TypeVar("T")
S = CardStatus


def pin_too_simple(pin: str) -> bool:
    """Six equal digits, or six consecutive digits going up or down (wrapping not allowed)."""
    if len(set(pin)) == 1:
        return True
    steps = {int(b) - int(a) for a, b in itertools.pairwise(pin)}
    return steps in ({1}, {-1})


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
        raise CardStateConflict("The provider has not issued the card yet", card.status)
    program = program_of(providers, card)
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
    card (`take_control_answer`) is 409 `CARD_CONTROL_SUPERSEDED` unless the card is
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
    if not take_control_answer(fresh, changed) and fresh.status != wanted:
        raise CardControlSuperseded(
            control,
            f"the card is {fresh.status}",
            status=fresh.status,
            auto_lock=fresh.auto_lock_enabled,
        )
    await session.flush()
    return fresh


async def freeze(session: AsyncSession, providers: Providers, card: Card) -> Card:
    """An active card becomes `FROZEN`. A card frozen here is frozen again at the provider
    too: an enable on its way there may have made it active already, and only the provider's
    answer orders the two (`_change`)."""
    card.refuse_if_cancelled()
    if card.status not in (S.ACTIVE, S.FROZEN):
        raise CardStateConflict("Only an active card can be frozen", card.status)
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
        raise CardStateConflict("Only a frozen card can be enabled", card.status)
    return await _change(session, providers, card, CardAction.UNFREEZE)


async def activate(session: AsyncSession, providers: Providers, card: Card) -> Card:
    card.refuse_if_cancelled()
    if card.card_type != "PHYSICAL":
        raise CardStateConflict("Only physical cards are activated", card.status)
    if card.status == S.ACTIVE:
        return card
    if card.status != S.INACTIVE:
        raise CardStateConflict(
            "Only a delivered physical card awaiting activation can be activated", card.status
        )
    card = await _change(session, providers, card, CardAction.ACTIVATE)
    card.activated_at = utcnow()
    return card


async def set_pin(session: AsyncSession, providers: Providers, card: Card, pin: str) -> Card:
    card.refuse_if_cancelled()
    if card.status == S.PENDING:
        raise CardStateConflict("The card is not issued yet", card.status)
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
    (`take_control_answer`), so a slow answer never undoes a later setting. A setting
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
    if not take_control_answer(fresh, answer) and fresh.auto_lock_enabled != enabled:
        now = "auto-lock is on" if fresh.auto_lock_enabled else "auto-lock is off"
        raise CardControlSuperseded(
            "auto-lock setting", now, status=fresh.status, auto_lock=fresh.auto_lock_enabled
        )
    await session.flush()
    return fresh


def take_control_answer(card: Card, answer: ProviderCard) -> bool:
    """The provider's answer to a control becomes the card's status, balance and auto-lock
    (call with the card's row locked), unless an answer the provider gave later was applied
    already. Whether it was applied.
    Controls racing on one card reach the provider in one order and may get their answers
    back in another (no lock is held across the call): the provider's `updated_at` orders
    them, so a slow answer never puts back the status a later control replaced (a card frozen
    here and active at the provider). A decline-fee block and `CANCELLED` stand whatever the
    answer says (`Card.take_provider_status`)."""
    if card.provider_seen_at is not None and answer.updated_at < card.provider_seen_at:
        return False
    card.provider_seen_at = answer.updated_at
    card.take_provider_status(PROVIDER_STATUS[answer.status])
    card.last_balance_minor = answer.balance_minor
    card.auto_lock_enabled = answer.auto_lock
    card.updated_at = utcnow()
    return True
