"""Sandbox banking provider: mandates and the collections made against them.

Behaves as the real provider does:
* `create_mandate` deduplicates by key and answers `PENDING`; the account holder's decision is
  simulated by `decide_mandate` (ACTIVE or FAILED) and sent as `mandate.status_changed`;
* `collect` deduplicates by key. Against a mandate that is not active, or past its end date,
  the collection is `FAILED` with its reason; a budget that cannot pay fails it
  `INSUFFICIENT_FUNDS`; otherwise the money moves from the budget to the company's master
  balance and it is `COMPLETED`. With the `pending` fault it is accepted `PENDING` and nothing
  moves until `settle_collection` decides it (sent as `collection.status_changed`); with
  `timeout` the work is done and the answer is lost.
"""

from __future__ import annotations

import uuid
from datetime import date
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.db.dialect import for_update
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import today, utcnow
from finplat.providers.banking.port import (
    COLLECTION_STATUS_CHANGED,
    MANDATE_STATUS_CHANGED,
    CollectionFailure,
    ProviderCollection,
    ProviderCollectionStatus,
    ProviderMandate,
    ProviderMandateStatus,
)
from finplat.providers.banking.sandbox.budgets import ProviderInsufficientFunds
from finplat.providers.banking.sandbox.models import (
    SandboxBankprovCollection,
    SandboxBankprovMandate,
)
from finplat.providers.banking.sandbox.transfers import SandboxTransfers, master_budget_id
from finplat.providers.errors import ProviderRejected
from finplat.providers.sandbox.faults import FaultMode

OPERATIONS: tuple[str, ...] = (
    "create_mandate",
    "cancel_mandate",
    "mandate_status",
    "collect",
    "collection_status",
)


class MandateUnknown(ProviderRejected):
    status = 404
    code = "PROVIDER_MANDATE_NOT_FOUND"
    message = "The banking provider has no such mandate."


class CollectionUnknown(ProviderRejected):
    status = 404
    code = "PROVIDER_COLLECTION_NOT_FOUND"
    message = "The banking provider has no such collection."


class MandateAlreadyDecided(ProviderRejected):
    status = 409
    code = "PROVIDER_MANDATE_DECIDED"
    message = "The mandate is no longer waiting for authorisation."


class CollectionAlreadySettled(ProviderRejected):
    status = 409
    code = "PROVIDER_COLLECTION_SETTLED"
    message = "The collection is no longer pending."


class KeyReused(ProviderRejected):
    status = 409
    code = "PROVIDER_IDEMPOTENCY_MISMATCH"
    message = "The provider already used this key with other terms."


def _mandate(row: SandboxBankprovMandate) -> ProviderMandate:
    return ProviderMandate(
        mandate_id=row.mandate_id, status=ProviderMandateStatus(row.status), reason=None
    )


_INSERT_COLLECTION = insert(SandboxBankprovCollection)


def _columns(row: SandboxBankprovCollection) -> dict[str, Any]:
    """The values of a collection not yet written, for `_INSERT_COLLECTION`."""
    table = SandboxBankprovCollection.__table__
    return {c.key: getattr(row, c.key) for c in table.columns if c.key != "id"}


def _collection(row: SandboxBankprovCollection) -> ProviderCollection:
    return ProviderCollection(
        collection_id=row.collection_id,
        mandate_id=row.mandate_id,
        status=ProviderCollectionStatus(row.status),
        amount_minor=row.amount_minor,
        currency=row.currency,
        reason=CollectionFailure(row.reason) if row.reason else None,
    )


class SandboxMandates(SandboxTransfers):
    async def create_mandate(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        budget_id: str,
        currency: str,
        max_amount_minor: int,
        end_date: date | None,
    ) -> ProviderMandate:
        mode = await self.sim.enter(company_id, "create_mandate")
        async with unit_of_work(self.factory) as session:
            row = (
                await session.execute(
                    select(SandboxBankprovMandate).where(
                        SandboxBankprovMandate.idempotency_key == idempotency_key
                    )
                )
            ).scalar_one_or_none()
            if row is None:
                await self.budget_row(session, company_id, budget_id)
                row = SandboxBankprovMandate(
                    company_id=company_id,
                    mandate_id=f"bp_mdt_{uuid.uuid4().hex[:24]}",
                    idempotency_key=idempotency_key,
                    budget_id=budget_id,
                    currency=currency,
                    max_amount_minor=max_amount_minor,
                    end_date=end_date,
                    status=ProviderMandateStatus.PENDING.value,
                    created_at=utcnow(),
                )
                session.add(row)
                await session.flush()
            elif (row.company_id, row.budget_id, row.currency, row.max_amount_minor) != (
                company_id,
                budget_id,
                currency,
                max_amount_minor,
            ):
                raise KeyReused()
            mandate = _mandate(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return mandate

    async def cancel_mandate(self, *, company_id: int, mandate_id: str) -> ProviderMandate:
        mode = await self.sim.enter(company_id, "cancel_mandate")
        async with unit_of_work(self.factory) as session:
            row = await self._mandate_row(session, company_id, mandate_id)
            if row.status in (ProviderMandateStatus.PENDING, ProviderMandateStatus.ACTIVE):
                row.status = ProviderMandateStatus.CANCELLED.value
                await session.flush()
            mandate = _mandate(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return mandate

    async def mandate(self, *, company_id: int, mandate_id: str) -> ProviderMandate:
        await self.sim.enter(company_id, "mandate_status")
        async with unit_of_work(self.factory) as session:
            return _mandate(await self._mandate_row(session, company_id, mandate_id))

    async def decide_mandate(
        self, *, company_id: int, mandate_id: str, approve: bool
    ) -> ProviderMandate:
        await self.sim.enter(company_id, "mandate_status")
        async with unit_of_work(self.factory) as session:
            row = await self._mandate_row(session, company_id, mandate_id)
            if row.status != ProviderMandateStatus.PENDING.value:
                raise MandateAlreadyDecided()
            decided = ProviderMandateStatus.ACTIVE if approve else ProviderMandateStatus.FAILED
            row.status = decided.value
            await session.flush()
            await self.sim.emit_callback(
                session,
                company_id=company_id,
                type_=MANDATE_STATUS_CHANGED,
                data={
                    "mandateId": row.mandate_id,
                    "status": row.status,
                    "reason": None if approve else "AUTHORISATION_REFUSED",
                },
            )
            return _mandate(row)

    async def collect(
        self,
        *,
        company_id: int,
        idempotency_key: str,
        mandate_id: str,
        currency: str,
        amount_minor: int,
    ) -> ProviderCollection:
        mode = await self.sim.enter(company_id, "collect")
        async with unit_of_work(self.factory) as session:
            row = await self._collection_by_key(session, idempotency_key)
            if row is None:
                mandate = await self._mandate_row(session, company_id, mandate_id)
                row = SandboxBankprovCollection(
                    company_id=company_id,
                    collection_id=f"bp_col_{uuid.uuid4().hex[:24]}",
                    idempotency_key=idempotency_key,
                    mandate_id=mandate_id,
                    currency=currency,
                    amount_minor=amount_minor,
                    status=ProviderCollectionStatus.PENDING.value,
                    reason=None,
                    created_at=utcnow(),
                )
                refusal = self._refusal(mandate, currency, amount_minor)
                if refusal is not None:
                    row.status = ProviderCollectionStatus.FAILED.value
                    row.reason = refusal.value
                elif mode is not FaultMode.PENDING:
                    await self._execute_collection(session, row, mandate)
                # Written once, in the state it reached (its key is unique: a parallel
                # collect with the key fails here and its money movements roll back).
                await session.execute(_INSERT_COLLECTION, _columns(row))
            elif (row.company_id, row.mandate_id, row.currency, row.amount_minor) != (
                company_id,
                mandate_id,
                currency,
                amount_minor,
            ):
                raise KeyReused()
            collection = _collection(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return collection

    async def collection_by_key(
        self, *, company_id: int, idempotency_key: str
    ) -> ProviderCollection | None:
        mode = await self.sim.enter(company_id, "collection_status")
        async with unit_of_work(self.factory) as session:
            row = await self._collection_by_key(session, idempotency_key)
            result = None if row is None or row.company_id != company_id else _collection(row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return result

    async def settle_collection(
        self,
        *,
        company_id: int,
        collection_id: str,
        status: ProviderCollectionStatus,
        reason: CollectionFailure | None,
    ) -> ProviderCollection:
        await self.sim.enter(company_id, "collection_status")
        async with unit_of_work(self.factory) as session:
            row = (
                await session.execute(
                    for_update(
                        select(SandboxBankprovCollection).where(
                            SandboxBankprovCollection.collection_id == collection_id,
                            SandboxBankprovCollection.company_id == company_id,
                        )
                    )
                )
            ).scalar_one_or_none()
            if row is None:
                raise CollectionUnknown()
            if row.status != ProviderCollectionStatus.PENDING.value:
                raise CollectionAlreadySettled()
            if status is ProviderCollectionStatus.COMPLETED:
                mandate = await self._mandate_row(session, company_id, row.mandate_id)
                await self._execute_collection(session, row, mandate)
            else:
                row.status = ProviderCollectionStatus.FAILED.value
                row.reason = (reason or CollectionFailure.REFUSED_BY_PAYER_BANK).value
            await session.flush()
            await self.sim.emit_callback(
                session,
                company_id=company_id,
                type_=COLLECTION_STATUS_CHANGED,
                data={
                    "collectionId": row.collection_id,
                    "status": row.status,
                    "reason": row.reason,
                    "idempotencyKey": row.idempotency_key,
                },
            )
            return _collection(row)

    # --------------------------------------------------------------------------- private

    @staticmethod
    def _refusal(
        mandate: SandboxBankprovMandate, currency: str, amount_minor: int
    ) -> CollectionFailure | None:
        if mandate.status == ProviderMandateStatus.CANCELLED.value:
            return CollectionFailure.MANDATE_CANCELLED
        if mandate.status != ProviderMandateStatus.ACTIVE.value:
            return CollectionFailure.MANDATE_NOT_ACTIVE
        if mandate.end_date is not None and today() > mandate.end_date:
            return CollectionFailure.MANDATE_EXPIRED
        if currency != mandate.currency or amount_minor > mandate.max_amount_minor:
            return CollectionFailure.REFUSED_BY_PAYER_BANK
        return None

    async def _execute_collection(
        self,
        session: AsyncSession,
        row: SandboxBankprovCollection,
        mandate: SandboxBankprovMandate,
    ) -> None:
        """Move the money, or fail the collection `INSUFFICIENT_FUNDS` (nothing moves: the
        debit is one guarded statement, first)."""
        try:
            await self.move(
                session,
                company_id=row.company_id,
                budget_id=mandate.budget_id,
                currency=row.currency,
                amount_minor=-row.amount_minor,
                kind="collection",
                reference=row.collection_id,
            )
        except ProviderInsufficientFunds:
            row.status = ProviderCollectionStatus.FAILED.value
            row.reason = CollectionFailure.INSUFFICIENT_FUNDS.value
            return
        await self._ensure_master_balance(session, row.company_id, row.currency)
        await self.move(
            session,
            company_id=row.company_id,
            budget_id=master_budget_id(row.company_id),
            currency=row.currency,
            amount_minor=row.amount_minor,
            kind="collection",
            reference=row.collection_id,
        )
        row.status = ProviderCollectionStatus.COMPLETED.value

    async def _mandate_row(
        self, session: AsyncSession, company_id: int, mandate_id: str
    ) -> SandboxBankprovMandate:
        row: SandboxBankprovMandate | None = (
            await session.execute(
                for_update(
                    select(SandboxBankprovMandate).where(
                        SandboxBankprovMandate.mandate_id == mandate_id,
                        SandboxBankprovMandate.company_id == company_id,
                    )
                )
            )
        ).scalar_one_or_none()
        if row is None:
            raise MandateUnknown()
        return row

    async def _collection_by_key(
        self, session: AsyncSession, key: str
    ) -> SandboxBankprovCollection | None:
        row: SandboxBankprovCollection | None = (
            await session.execute(
                for_update(
                    select(SandboxBankprovCollection).where(
                        SandboxBankprovCollection.idempotency_key == key
                    )
                )
            )
        ).scalar_one_or_none()
        return row
