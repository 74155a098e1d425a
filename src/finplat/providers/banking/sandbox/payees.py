"""Sandbox banking provider: payees (mixed into the composed provider in adapter.py).

The provider keeps each payee's full account details (as a real bank would) and deduplicates
registrations by idempotency key. Other parts of the sandbox (payments) look payees up with
`sandbox_payee`.
"""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.banking.port import PayeeDetails, ProviderPayee, ProviderPayeeStatus
from finplat.providers.banking.sandbox.budgets import SandboxBankingCore
from finplat.providers.banking.sandbox.models import SandboxBankprovPayee
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode

OPERATIONS: tuple[str, ...] = ("register_payee", "payee_by_key", "remove_payee")
# What the sandbox provider's payment methods carry.
METHOD_CURRENCIES: dict[str, tuple[str, ...]] = {
    "SEPA.CREDITTRANSFER": ("EUR",),
    "SEPA.INSTANT": ("EUR",),
    "FPS": ("GBP",),
    "SWIFT": ("EUR", "GBP", "USD"),
}


class PayeeUnknown(ProviderRejected):
    status = 404
    code = "PROVIDER_PAYEE_NOT_FOUND"
    message = "The banking provider has no such payee."


async def sandbox_payee(
    session: AsyncSession, *, company_id: int, payee_id: str
) -> SandboxBankprovPayee | None:
    """The provider's payee (any status), for the other parts of the sandbox provider."""
    return (
        await session.execute(
            select(SandboxBankprovPayee).where(
                SandboxBankprovPayee.payee_id == payee_id,
                SandboxBankprovPayee.company_id == company_id,
            )
        )
    ).scalar_one_or_none()


def _payee(row: SandboxBankprovPayee) -> ProviderPayee:
    return ProviderPayee(
        payee_id=row.payee_id,
        account_id=row.account_id,
        name=row.name,
        payment_method=row.payment_method,
        currency=row.currency,
        account_number_last4=row.account_number_last4,
        status=ProviderPayeeStatus(row.status),
        created_at=row.created_at,
    )


class SandboxPayees(SandboxBankingCore):
    async def register_payee(
        self,
        *,
        company_id: int,
        account_id: str,
        idempotency_key: str,
        details: PayeeDetails,
    ) -> ProviderPayee:
        mode = await self.sim.enter(company_id, "register_payee")
        if details.currency not in METHOD_CURRENCIES.get(details.payment_method, ()):
            raise ProviderRejected(
                f"The provider does not pay {details.currency} by {details.payment_method}.",
                code="PROVIDER_PAYMENT_METHOD_NOT_SUPPORTED",
            )
        account_code = details.iban or details.account_number
        if not account_code:
            raise ProviderRejected(
                "The payee needs an IBAN or an account number.", code="PROVIDER_INVALID_PAYEE"
            )
        async with unit_of_work(self.factory) as session:
            await self.active_account(session, company_id, account_id)
            await session.execute(
                insert_ignoring_conflicts(session, SandboxBankprovPayee).values(
                    company_id=company_id,
                    account_id=account_id,
                    payee_id=f"bp_pye_{uuid.uuid4().hex[:24]}",
                    idempotency_key=idempotency_key,
                    name=details.name,
                    payment_type=details.payment_type,
                    payment_method=details.payment_method,
                    currency=details.currency,
                    iban=details.iban,
                    account_number=details.account_number,
                    sort_code=details.sort_code,
                    account_number_last4=account_code[-4:],
                    bic=details.bic,
                    bank_name=details.bank_name,
                    bank_country=details.bank_country,
                    status=ProviderPayeeStatus.ACTIVE.value,
                    created_at=utcnow(),
                )
            )
            row = await self._by_key(session, idempotency_key)
            if row is None or row.company_id != company_id or row.account_id != account_id:
                raise ProviderRejected(
                    "The provider already used this key for another payee.",
                    code="PROVIDER_IDEMPOTENCY_MISMATCH",
                )
            payee = _payee(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return payee

    async def payee_by_key(self, *, company_id: int, idempotency_key: str) -> ProviderPayee | None:
        await self.sim.enter(company_id, "payee_by_key")
        async with unit_of_work(self.factory) as session:
            row = await self._by_key(session, idempotency_key)
            if row is None or row.company_id != company_id:
                return None
            return _payee(row)

    async def remove_payee(self, *, company_id: int, payee_id: str) -> ProviderPayee:
        mode = await self.sim.enter(company_id, "remove_payee")
        async with unit_of_work(self.factory) as session:
            row = await sandbox_payee(session, company_id=company_id, payee_id=payee_id)
            if row is None:
                raise PayeeUnknown()
            if row.status != ProviderPayeeStatus.REMOVED.value:
                row.status = ProviderPayeeStatus.REMOVED.value
                row.removed_at = utcnow()
                await session.flush()
            payee = _payee(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return payee

    async def _by_key(
        self, session: AsyncSession, idempotency_key: str
    ) -> SandboxBankprovPayee | None:
        return (
            await session.execute(
                select(SandboxBankprovPayee).where(
                    SandboxBankprovPayee.idempotency_key == idempotency_key
                )
            )
        ).scalar_one_or_none()
