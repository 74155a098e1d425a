"""Sandbox banking provider: transfers between two budgets of one account, and from a budget to
the company's master account (mixed into the composed provider in adapter.py).

The company's master account at the provider is a balance row of its own (budget id
`master:{company_id}`), created on first use. A transfer debits the source at once; a
completed one credits the destination in the same transaction. With the `pending` fault the
transfer is accepted but left `PENDING` (source debited, destination not yet credited) and
completes the next time its status is asked for; with `timeout` the work is done and the
answer is lost.
"""

from __future__ import annotations

import uuid
from typing import cast

from sqlalchemy import Table, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db import driver_statements
from finplat.db.dialect import for_update, insert_ignoring_conflicts, inserts_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.banking.port import ProviderTransfer, ProviderTransferStatus
from finplat.providers.banking.sandbox.budgets import SandboxBankingCore
from finplat.providers.banking.sandbox.models import SandboxBankprovBalance, SandboxBankprovTransfer
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode

OPERATIONS: tuple[str, ...] = ("transfer", "transfer_status")
# A transfer's row, once per key: built once, its values bound on each call.
_NEW_TRANSFER = inserts_ignoring_conflicts(cast(Table, SandboxBankprovTransfer.__table__))


def master_budget_id(company_id: int) -> str:
    """The provider balance row holding the company's master funds."""
    return f"master:{company_id}"


class TransferRefused(ProviderRejected):
    status = 400
    code = "PROVIDER_TRANSFER_REFUSED"
    message = "The banking provider refused the transfer."


class TransferKeyReused(ProviderRejected):
    status = 409
    code = "PROVIDER_IDEMPOTENCY_MISMATCH"
    message = "The provider already used this key for a transfer with other terms."


class SandboxTransfers(SandboxBankingCore):
    async def transfer(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        from_budget_id: str,
        to_budget_id: str | None,
        currency: str,
        amount_minor: int,
    ) -> ProviderTransfer:
        mode = await self.sim.enter(company_id, "transfer")
        if amount_minor <= 0:
            raise TransferRefused("The amount must be positive.")
        async with unit_of_work(self.factory) as session:
            source = await self.budget_row(session, company_id, from_budget_id)
            await self.active_account(session, company_id, source.account_id)
            if to_budget_id is None:
                target = master_budget_id(company_id)
                await self._ensure_master_balance(session, company_id, currency)
            else:
                destination = await self.budget_row(session, company_id, to_budget_id)
                if destination.account_id != source.account_id:
                    raise TransferRefused("Both budgets must belong to the same account.")
                if destination.budget_id == source.budget_id:
                    raise TransferRefused("The source and destination budgets are the same.")
                target = destination.budget_id
            status = (
                ProviderTransferStatus.PENDING
                if mode is FaultMode.PENDING
                else ProviderTransferStatus.COMPLETED
            )
            now = utcnow()
            values = {
                "company_id": company_id,
                "transfer_id": f"bp_trf_{uuid.uuid4().hex[:24]}",
                "idempotency_key": idempotency_key,
                "from_budget_id": from_budget_id,
                "to_budget_id": target,
                "to_master": to_budget_id is None,
                "currency": currency,
                "amount_minor": amount_minor,
                "status": status.value,
                "created_at": now,
                "completed_at": now if status is ProviderTransferStatus.COMPLETED else None,
            }
            connection = await driver_statements.connection_of(session)
            inserted = await driver_statements.execute(
                connection, _NEW_TRANSFER[connection.dialect.name], values
            )
            if inserted == 1:
                # What was just written, without reading it back.
                row = SandboxBankprovTransfer(**values)
                await self._move_both(
                    session, row, completed=status is ProviderTransferStatus.COMPLETED
                )
            else:
                found = await self._transfer_row(session, company_id, idempotency_key)
                assert found is not None
                row = found
                if (row.from_budget_id, row.to_budget_id, row.currency, row.amount_minor) != (
                    from_budget_id,
                    target,
                    currency,
                    amount_minor,
                ):
                    raise TransferKeyReused()
            result = _view(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return result

    async def transfer_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> ProviderTransfer | None:
        mode = await self.sim.enter(company_id, "transfer_status")
        async with unit_of_work(self.factory) as session:
            row = await self._transfer_row(session, company_id, idempotency_key, lock=True)
            if row is None:
                result = None
            else:
                if (
                    row.status == ProviderTransferStatus.PENDING.value
                    and mode is not FaultMode.PENDING
                ):
                    # The provider decides a pending transfer when it is next asked about it.
                    await self._credit_destination(session, row)
                    row.status = ProviderTransferStatus.COMPLETED.value
                    row.completed_at = utcnow()
                    await session.flush()
                result = _view(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return result

    # --------------------------------------------------------------------------- private

    async def _move_both(
        self, session: AsyncSession, row: SandboxBankprovTransfer, *, completed: bool
    ) -> None:
        """Debit the source and, when the transfer completed at once, credit the destination,
        in budget id order: each UPDATE locks its balance, and one order for every transfer
        means opposite transfers between the same budgets wait instead of deadlocking."""
        moves = [(row.from_budget_id, -row.amount_minor, "transfer_out")]
        if completed:
            moves.append((row.to_budget_id, row.amount_minor, "transfer_in"))
        for budget_id, amount_minor, kind in sorted(moves):
            await self.move(
                session,
                company_id=row.company_id,
                budget_id=budget_id,
                currency=row.currency,
                amount_minor=amount_minor,
                kind=kind,
                reference=row.transfer_id,
            )

    async def _credit_destination(
        self, session: AsyncSession, row: SandboxBankprovTransfer
    ) -> None:
        await self.move(
            session,
            company_id=row.company_id,
            budget_id=row.to_budget_id,
            currency=row.currency,
            amount_minor=row.amount_minor,
            kind="transfer_in",
            reference=row.transfer_id,
        )

    async def _ensure_master_balance(
        self, session: AsyncSession, company_id: int, currency: str
    ) -> None:
        await session.execute(
            insert_ignoring_conflicts(session, SandboxBankprovBalance).values(
                company_id=company_id,
                budget_id=master_budget_id(company_id),
                currency=currency,
                amount_minor=0,
            )
        )

    async def _transfer_row(
        self, session: AsyncSession, company_id: int, key: str, *, lock: bool = False
    ) -> SandboxBankprovTransfer | None:
        stmt = select(SandboxBankprovTransfer).where(
            SandboxBankprovTransfer.company_id == company_id,
            SandboxBankprovTransfer.idempotency_key == key,
        )
        if lock:
            stmt = for_update(stmt)
        found: SandboxBankprovTransfer | None = (
            await session.execute(stmt.execution_options(populate_existing=True))
        ).scalar_one_or_none()
        return found


def _view(row: SandboxBankprovTransfer) -> ProviderTransfer:
    return ProviderTransfer(
        transfer_id=row.transfer_id,
        status=ProviderTransferStatus(row.status),
        from_budget_id=row.from_budget_id,
        to_budget_id=None if row.to_master else row.to_budget_id,
        currency=row.currency,
        amount_minor=row.amount_minor,
        reason=row.reason,
        created_at=row.created_at,
        completed_at=row.completed_at,
    )
