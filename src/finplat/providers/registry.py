"""Picks the provider implementations from configuration; services never import adapters."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.config import Settings
from finplat.providers.funding.base import FundingRail
from finplat.providers.funding.sandbox import SandboxFundingRail


@dataclass(frozen=True)
class Providers:
    funding: FundingRail | None


def build_providers(settings: Settings, factory: async_sessionmaker[AsyncSession]) -> Providers:
    if settings.sandbox:
        return Providers(
            funding=SandboxFundingRail(factory, latency_ms=settings.sandbox_latency_ms)
        )
    return Providers(funding=None)
