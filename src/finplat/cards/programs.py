"""The card at its provider: the programme that runs it, its id there, how the provider sees it
now, and a status change made there. Each call commits the caller's work first
(`commit_then_call`)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.cards.errors import CardNotIssued
from finplat.cards.models import Card
from finplat.errors import ServiceUnavailable
from finplat.providers.calls import commit_then_call
from finplat.providers.cards.port import CardAction, CardProgram, CardSimulation, ProviderCard
from finplat.providers.errors import ProviderRejected
from finplat.providers.registry import Providers, configured


def program_for(providers: Providers, provider: str) -> CardProgram:
    """The card programme of `provider`, or 503 when none is configured."""
    return configured(providers.card_programs.get(provider), f"No {provider} card provider.")


def program_of(providers: Providers, card: Card) -> CardProgram:
    return program_for(providers, card.provider)


def simulation_of(providers: Providers, card: Card, *, what: str) -> CardSimulation:
    """The card's programme as a sandbox simulation, or 503 naming `what` it cannot simulate
    (a real provider, or any programme without the sandbox's controls)."""
    program = program_of(providers, card)
    if not isinstance(program, CardSimulation):
        raise ServiceUnavailable(f"The card provider cannot simulate {what}.")
    return program


def provider_card_id(card: Card) -> str:
    if card.provider_card_id is None:
        raise CardNotIssued()
    return card.provider_card_id


async def provider_view(
    session: AsyncSession | None, providers: Providers, card: Card
) -> ProviderCard | None:
    """The card as its provider shows it now; None when the provider no longer knows it
    (cancelled cards stop being exposed). Commits the caller's transaction, as every provider
    call does."""
    program, ref, company_id = program_of(providers, card), provider_card_id(card), card.company_id
    try:
        return await commit_then_call(
            session,
            providers.policy,
            provider=card.provider,
            operation="card",
            call=lambda: program.card(company_id=company_id, card_id=ref),
            idempotent=True,
        )
    except ProviderRejected as exc:
        if exc.status == 404:
            return None
        raise


async def change_at_provider(
    session: AsyncSession, providers: Providers, card: Card, action: CardAction
) -> ProviderCard:
    """Change the card's status at its provider (idempotent there), no lock held across the
    call; the local status is the caller's to write."""
    program, ref, company_id = program_of(providers, card), provider_card_id(card), card.company_id
    return await commit_then_call(
        session,
        providers.policy,
        provider=card.provider,
        operation="change_status",
        call=lambda: program.change_status(company_id=company_id, card_id=ref, action=action),
        idempotent=True,
    )
