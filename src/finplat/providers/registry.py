"""Picks the provider implementations from configuration; services never import adapters.

Only sandbox simulators ship today; a real provider is one more adapter module chosen here.
Without the sandbox, a capability is None and the operations needing it answer 503.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.config import Settings
from finplat.errors import ServiceUnavailable
from finplat.providers.banking.port import BankingProvider
from finplat.providers.banking.sandbox.adapter import SandboxBanking
from finplat.providers.banking_onboarding.port import BankingOnboarding
from finplat.providers.banking_onboarding.sandbox.adapter import SandboxBankingOnboarding
from finplat.providers.business_onboarding.port import BusinessOnboarding
from finplat.providers.business_onboarding.sandbox.adapter import SandboxBusinessOnboarding
from finplat.providers.calls import CallPolicy
from finplat.providers.cards.port import CardIssuer, CardProgram
from finplat.providers.cards.sandbox.adapter import SandboxCardProgram
from finplat.providers.cards.sandbox.issuer import SandboxCardIssuer
from finplat.providers.crypto.port import CryptoRail
from finplat.providers.crypto.sandbox.adapter import SandboxCryptoRail
from finplat.providers.funding.port import FundingRail
from finplat.providers.funding.sandbox.adapter import SandboxFundingRail
from finplat.providers.identity.port import IdentityVerification
from finplat.providers.identity.sandbox.adapter import SandboxIdentityVerification
from finplat.providers.messaging.port import CodeMailer
from finplat.providers.messaging.sandbox.adapter import SandboxMailer
from finplat.providers.switching.port import SwitchProvider
from finplat.providers.switching.sandbox.adapter import SandboxSwitchProvider

T = TypeVar("T")

# The sandbox card programmes' BINs (the first six digits of their card numbers).
CARD_BINS = {"cardprov": "424242", "switchprov": "535353", "bankprov": "545454"}


def configured(adapter: T | None, missing: str) -> T:
    """The adapter, or 503 with `missing` as the message when none is configured."""
    if adapter is None:
        raise ServiceUnavailable(missing)
    return adapter


@dataclass(frozen=True)
class Providers:
    policy: CallPolicy
    funding: FundingRail | None = None
    identity: IdentityVerification | None = None
    cardprov: CardIssuer | None = None
    switchprov: SwitchProvider | None = None
    crypto: CryptoRail | None = None
    banking_onboarding: BankingOnboarding | None = None
    business_onboarding: BusinessOnboarding | None = None
    banking: BankingProvider | None = None
    mailer: CodeMailer | None = None
    # The card programmes by provider name (`cardprov`, `switchprov`, `bankprov`).
    card_programs: dict[str, CardProgram] = field(default_factory=dict)


def build_providers(settings: Settings, factory: async_sessionmaker[AsyncSession]) -> Providers:
    policy = CallPolicy.from_settings(settings)
    if not settings.sandbox:
        return Providers(policy=policy)
    latency = settings.sandbox_latency_ms
    return Providers(
        policy=policy,
        funding=SandboxFundingRail(factory, latency_ms=latency),
        identity=SandboxIdentityVerification(factory, latency_ms=latency),
        cardprov=SandboxCardIssuer(factory, latency_ms=latency),
        switchprov=SandboxSwitchProvider(factory, latency_ms=latency),
        crypto=SandboxCryptoRail(factory, latency_ms=latency),
        banking_onboarding=SandboxBankingOnboarding(factory, latency_ms=latency),
        business_onboarding=SandboxBusinessOnboarding(factory, latency_ms=latency),
        banking=SandboxBanking(factory, latency_ms=latency),
        mailer=SandboxMailer(factory),
        card_programs={
            name: SandboxCardProgram(
                factory,
                provider=name,
                bin_prefix=bin_prefix,
                secret=settings.provider_callback_secret,
                latency_ms=latency,
            )
            for name, bin_prefix in CARD_BINS.items()
        },
    )
