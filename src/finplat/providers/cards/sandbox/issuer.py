"""Sandbox card issuer: opens cardholder accounts (ACTIVE at once, or PENDING under a
`pending` fault until the sandbox reviews them)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.providers.cards.port import Cardholder, HolderAccount
from finplat.providers.cards.sandbox.holder_accounts import SandboxHolderAccounts
from finplat.providers.names import ExternalProvider

OPERATIONS = ("create_account",)


class SandboxCardIssuer:
    name = ExternalProvider.CARDPROV.value

    def __init__(self, factory: async_sessionmaker[AsyncSession], *, latency_ms: int = 0) -> None:
        self.accounts = SandboxHolderAccounts(factory, provider=self.name, latency_ms=latency_ms)

    async def create_account(self, *, company_id: int, holder: Cardholder) -> HolderAccount:
        return await self.accounts.open("create_account", company_id=company_id, holder=holder)

    async def review_account(self, *, company_id: int, reference: str, approved: bool) -> None:
        await self.accounts.review(company_id=company_id, reference=reference, approved=approved)
