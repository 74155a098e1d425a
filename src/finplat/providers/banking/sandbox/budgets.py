"""Sandbox banking provider, core banking: budgets, balances, account details, incoming money.

`SandboxBankingCore` is the base of the composed sandbox provider (`adapter.py`): it owns the
simulator and the one primitive every money-moving part uses, `move` (change a balance and
write its statement line, refusing to go below zero), always inside the caller's own
sandbox transaction.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from typing import cast

from schwifty import IBAN
from sqlalchemy import Table, bindparam, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db import driver_statements
from finplat.db.dialect import insert_ignoring_conflicts
from finplat.db.unit_of_work import unit_of_work
from finplat.kit.clock import utcnow
from finplat.providers.banking.port import (
    BUDGET_CURRENCIES,
    PAYMENT_RECEIVED,
    BankingDetails,
    IncomingPayment,
    ProviderBudget,
)
from finplat.providers.banking.sandbox.models import (
    SandboxBankprovBalance,
    SandboxBankprovBudget,
    SandboxBankprovMovement,
)
from finplat.providers.banking_onboarding.port import AccountStatus
from finplat.providers.banking_onboarding.sandbox.models import SandboxBankprovAccount
from finplat.providers.errors import ProviderRejected
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode
from finplat.providers.sandbox.simulator import Simulator

PROVIDER = ExternalProvider.BANKPROV.value
OPERATIONS = ("banking_details", "list_budgets", "create_budget", "simulate_incoming")
DEFAULT_BUDGET_NAME = "Main"
BANK_NAME = "Bankprov Sandbox Bank"
BANK_ADDRESS = "1 Sandbox Street, London EC2A 1AA, United Kingdom"
SANDBOX_BANK_CODE = "NWBK601613"  # a real GB bank code and sort code, so the IBAN checks out


# Every money-moving call of the sandbox runs these: each built once (building a statement's
# expression on every call cost the sandbox as much as executing it, docs/performance.md).
# A movement's statement line is written, never read back by the request (an object of the
# session would cost the ORM's flush, a few times the statement).
_MOVEMENT = insert(cast(Table, SandboxBankprovMovement.__table__))
_BALANCES = cast(Table, SandboxBankprovBalance.__table__)
_ONE_BALANCE = (
    _BALANCES.c.company_id == bindparam("m_company_id"),
    _BALANCES.c.budget_id == bindparam("m_budget_id"),
    _BALANCES.c.currency == bindparam("m_currency"),
)
# A balance changed by an amount only while it stays at or above zero.
_MOVE = (
    update(_BALANCES)
    .where(*_ONE_BALANCE, _BALANCES.c.amount_minor + bindparam("m_amount") >= 0)
    .values(amount_minor=_BALANCES.c.amount_minor + bindparam("m_amount"))
)
_HELD = select(_BALANCES.c.amount_minor).where(*_ONE_BALANCE)
_BUDGET = select(SandboxBankprovBudget).where(
    SandboxBankprovBudget.company_id == bindparam("b_company_id"),
    SandboxBankprovBudget.budget_id == bindparam("b_budget_id"),
)
_ACCOUNT = select(SandboxBankprovAccount).where(
    SandboxBankprovAccount.company_id == bindparam("b_company_id"),
    SandboxBankprovAccount.account_id == bindparam("b_account_id"),
)


class AccountNotActive(ProviderRejected):
    status = 409
    code = "PROVIDER_ACCOUNT_NOT_ACTIVE"
    message = "The banking provider's account is not active."


class BudgetUnknown(ProviderRejected):
    status = 404
    code = "PROVIDER_BUDGET_NOT_FOUND"
    message = "The banking provider has no such budget."


class CurrencyNotHeld(ProviderRejected):
    status = 400
    code = "PROVIDER_CURRENCY_NOT_HELD"
    message = "The budget does not hold that currency."


class ProviderInsufficientFunds(ProviderRejected):
    status = 400
    code = "PROVIDER_INSUFFICIENT_FUNDS"
    message = "The banking provider's balance does not cover the amount."


class SandboxBankingCore:
    name = "sandbox"

    def __init__(self, factory: async_sessionmaker[AsyncSession], *, latency_ms: int = 0) -> None:
        self.factory = factory
        self.sim = Simulator(factory, provider=PROVIDER, latency_ms=latency_ms)

    # ------------------------------------------------------------------ shared primitives

    async def move(
        self,
        session: AsyncSession,
        *,
        company_id: int,
        budget_id: str,
        currency: str,
        amount_minor: int,
        kind: str,
        reference: str,
    ) -> None:
        """Change a budget's balance by `amount_minor` (negative takes money out) and record
        the movement; refuses a currency the budget does not hold or a balance below zero."""
        connection = await driver_statements.connection_of(session)
        moved = await driver_statements.execute(
            connection,
            _MOVE,
            {
                "m_company_id": company_id,
                "m_budget_id": budget_id,
                "m_currency": currency,
                "m_amount": amount_minor,
            },
        )
        if moved != 1:
            held = await self.balance_of(session, company_id, budget_id, currency)
            if held is None:
                raise CurrencyNotHeld()
            raise ProviderInsufficientFunds()
        await driver_statements.execute(
            connection,
            _MOVEMENT,
            {
                "company_id": company_id,
                "budget_id": budget_id,
                "currency": currency,
                "amount_minor": amount_minor,
                "kind": kind,
                "reference": reference,
                "created_at": utcnow(),
            },
        )

    async def balance_of(
        self, session: AsyncSession, company_id: int, budget_id: str, currency: str
    ) -> int | None:
        params = {"m_company_id": company_id, "m_budget_id": budget_id, "m_currency": currency}
        return (await session.execute(_HELD, params)).scalar_one_or_none()

    async def budget_row(
        self, session: AsyncSession, company_id: int, budget_id: str
    ) -> SandboxBankprovBudget:
        params = {"b_company_id": company_id, "b_budget_id": budget_id}
        row = (await session.execute(_BUDGET, params)).scalar_one_or_none()
        if row is None:
            raise BudgetUnknown()
        return row

    async def active_account(
        self, session: AsyncSession, company_id: int, account_id: str
    ) -> SandboxBankprovAccount:
        params = {"b_company_id": company_id, "b_account_id": account_id}
        account = (await session.execute(_ACCOUNT, params)).scalar_one_or_none()
        if account is None or account.status != AccountStatus.ACTIVE.value:
            raise AccountNotActive()
        return account

    # --------------------------------------------------------------------------- budgets

    async def banking_details(
        self, *, company_id: int, account_id: str, holder_name: str
    ) -> BankingDetails:
        await self.sim.enter(company_id, "banking_details")
        async with unit_of_work(self.factory) as session:
            await self.active_account(session, company_id, account_id)
        # Stable per account: the same details on every call, as a real IBAN is.
        digits = str(int(hashlib.sha256(account_id.encode()).hexdigest(), 16))[-8:]
        iban = IBAN.generate("GB", bank_code=SANDBOX_BANK_CODE, account_code=digits)
        return BankingDetails(
            account_id=account_id,
            account_holder_name=holder_name,
            iban=str(iban),
            bic=str(iban.bic),
            bank_name=BANK_NAME,
            bank_address=BANK_ADDRESS,
            account_number=digits,
            sort_code=SANDBOX_BANK_CODE[4:],
        )

    async def list_budgets(self, *, company_id: int, account_id: str) -> list[ProviderBudget]:
        await self.sim.enter(company_id, "list_budgets")
        async with unit_of_work(self.factory) as session:
            await self.active_account(session, company_id, account_id)
            await self._open_budget(
                session,
                company_id=company_id,
                account_id=account_id,
                key=f"default:{account_id}",
                name=DEFAULT_BUDGET_NAME,
                currencies=BUDGET_CURRENCIES,
                is_default=True,
            )
            rows = (
                await session.execute(
                    select(SandboxBankprovBudget)
                    .where(
                        SandboxBankprovBudget.account_id == account_id,
                        SandboxBankprovBudget.company_id == company_id,
                    )
                    .order_by(SandboxBankprovBudget.id)
                )
            ).scalars()
            return [await self._budget(session, row) for row in rows]

    async def create_budget(
        self,
        *,
        company_id: int,
        account_id: str,
        idempotency_key: str,
        name: str,
        currencies: Sequence[str],
    ) -> ProviderBudget:
        mode = await self.sim.enter(company_id, "create_budget")
        unknown = sorted(set(currencies) - set(BUDGET_CURRENCIES))
        if unknown:
            raise ProviderRejected(
                f"The provider does not hold {', '.join(unknown)}.",
                code="PROVIDER_CURRENCY_NOT_SUPPORTED",
            )
        async with unit_of_work(self.factory) as session:
            await self.active_account(session, company_id, account_id)
            row = await self._open_budget(
                session,
                company_id=company_id,
                account_id=account_id,
                key=idempotency_key,
                name=name,
                currencies=currencies,
                is_default=False,
            )
            if row.account_id != account_id or row.company_id != company_id:
                raise ProviderRejected(
                    "The provider already used this key for another budget.",
                    code="PROVIDER_IDEMPOTENCY_MISMATCH",
                )
            budget = await self._budget(session, row)
        if mode is FaultMode.TIMEOUT:
            await self.sim.hang()
        return budget

    async def simulate_incoming(
        self,
        *,
        company_id: int,
        budget_id: str,
        currency: str,
        amount_minor: int,
        scheme: str,
        sender_name: str,
        reference: str | None,
    ) -> IncomingPayment:
        await self.sim.enter(company_id, "simulate_incoming")
        payment_id = f"bp_in_{uuid.uuid4().hex[:24]}"
        async with unit_of_work(self.factory) as session:
            budget = await self.budget_row(session, company_id, budget_id)
            await self.move(
                session,
                company_id=company_id,
                budget_id=budget_id,
                currency=currency,
                amount_minor=amount_minor,
                kind="incoming",
                reference=payment_id,
            )
            received = IncomingPayment(
                payment_id=payment_id,
                budget_id=budget_id,
                currency=currency,
                amount_minor=amount_minor,
                scheme=scheme,
                sender_name=sender_name,
                reference=reference,
                received_at=utcnow(),
            )
            await self.sim.emit_callback(
                session,
                company_id=company_id,
                type_=PAYMENT_RECEIVED,
                data={
                    "paymentId": payment_id,
                    "accountId": budget.account_id,
                    "budgetId": budget_id,
                    "budgetName": budget.name,
                    "budgetIsDefault": budget.is_default,
                    "currency": currency,
                    "amountMinor": amount_minor,
                    "scheme": scheme,
                    "senderName": sender_name,
                    "reference": reference,
                    "receivedAt": received.received_at.isoformat(),
                },
            )
        return received

    # --------------------------------------------------------------------------- private

    async def _open_budget(
        self,
        session: AsyncSession,
        *,
        company_id: int,
        account_id: str,
        key: str,
        name: str,
        currencies: Sequence[str],
        is_default: bool,
    ) -> SandboxBankprovBudget:
        budget_id = f"bp_bud_{uuid.uuid4().hex[:24]}"
        inserted = await session.execute(
            insert_ignoring_conflicts(session, SandboxBankprovBudget).values(
                company_id=company_id,
                account_id=account_id,
                budget_id=budget_id,
                idempotency_key=key,
                name=name,
                is_default=is_default,
                created_at=utcnow(),
            )
        )
        if inserted.rowcount == 1:  # type: ignore[attr-defined]
            for currency in currencies:
                session.add(
                    SandboxBankprovBalance(
                        company_id=company_id,
                        budget_id=budget_id,
                        currency=currency,
                        amount_minor=0,
                    )
                )
            await session.flush()
        return (
            await session.execute(
                select(SandboxBankprovBudget).where(SandboxBankprovBudget.idempotency_key == key)
            )
        ).scalar_one()

    async def _budget(self, session: AsyncSession, row: SandboxBankprovBudget) -> ProviderBudget:
        balances = (
            await session.execute(
                select(SandboxBankprovBalance.currency, SandboxBankprovBalance.amount_minor)
                .where(SandboxBankprovBalance.budget_id == row.budget_id)
                .order_by(SandboxBankprovBalance.id)
            )
        ).all()
        return ProviderBudget(
            budget_id=row.budget_id,
            account_id=row.account_id,
            name=row.name,
            is_default=row.is_default,
            balances={currency: amount for currency, amount in balances},
            created_at=row.created_at,
        )
