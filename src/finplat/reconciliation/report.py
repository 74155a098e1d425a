"""What a reconciliation run found, as JSON (`to_json`) and as a short text (`summary`).

Amounts are kept in integer minor units and written as exact decimal JSON numbers. A balance
difference is `provider - ledger`: positive when the provider holds more than the ledger says
is available (for a card, available adjusted for its movements in flight: see
`finplat.reconciliation.card_balances`). A card's difference names its `cardId`, a budget's its
`budgetId`; a crypto rail's custody difference is the company's (no `userId`: the rail holds
every user's coins together, see `finplat.reconciliation.crypto_custody`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from finplat.kit.money import amount_for_json, exact_json_numbers, from_minor

NO_PROVIDER = "NO_PROVIDER_CONFIGURED"  # the reason of accounts whose provider is not configured


@dataclass(frozen=True)
class SettledTransaction:
    """A pending transaction the provider had decided; now final."""

    company_id: int
    transaction_id: int | str  # a crypto transfer's id is text (`ctr_...`)
    type: str
    status: str


@dataclass(frozen=True)
class PendingTransaction:
    """A transaction that stays pending, and why."""

    company_id: int
    transaction_id: int | str  # a crypto transfer's id is text (`ctr_...`)
    type: str
    reason: str


@dataclass(frozen=True)
class BalanceDifference:
    company_id: int
    user_id: int | None  # None: a company-wide balance (a crypto rail's custody)
    # None: a card's balance, or money the provider holds where the platform mirrors nothing
    budget_id: str | None
    currency: str
    ledger_minor: int  # the ledger's available balance (posted - pending debits)
    # (a card's: adjusted for its movements in flight, as the provider made them)
    provider_minor: int
    source: str  # the balance source (provider) that reported it
    note: str | None = None
    card_id: int | None = None  # the card whose balance differs (local id)

    @property
    def difference_minor(self) -> int:
        return self.provider_minor - self.ledger_minor


@dataclass(frozen=True)
class UncheckedAccount:
    """A provider account (or a card: its provider card id) whose balances could not be
    compared (the provider did not answer or refused)."""

    company_id: int
    user_id: int | None  # None: a company-wide balance (a crypto rail's custody)
    source: str
    account_id: str
    balances: int  # local balances left unchecked
    reason: str  # the error code
    card_id: int | None = None  # the card left unchecked (local id)


@dataclass(frozen=True)
class RunError:
    """A part of the run that failed unexpectedly (the rest of the run went on)."""

    company_id: int
    stage: str
    error: str  # the exception type, never its message


@dataclass
class BalanceCheck:
    """What one balance checker found for one company."""

    checked: int = 0
    differences: list[BalanceDifference] = field(default_factory=list)
    unchecked: list[UncheckedAccount] = field(default_factory=list)


@dataclass
class ReconciliationReport:
    company_id: int | None  # the one company reconciled, or None for all
    started_at: datetime
    finished_at: datetime | None = None
    companies: list[int] = field(default_factory=list)
    settled: list[SettledTransaction] = field(default_factory=list)
    pending: list[PendingTransaction] = field(default_factory=list)
    balances_checked: int = 0
    differences: list[BalanceDifference] = field(default_factory=list)
    unchecked: list[UncheckedAccount] = field(default_factory=list)
    errors: list[RunError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """No balance difference, no unchecked account and no failed part. Transactions that
        stay pending are not a failure: the provider has not decided them yet."""
        return not (self.differences or self.unchecked or self.errors)

    def add_check(self, check: BalanceCheck) -> None:
        self.balances_checked += check.checked
        self.differences += check.differences
        self.unchecked += check.unchecked

    # ------------------------------------------------------------------------------ output

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "companyId": self.company_id,
            "startedAt": self.started_at.isoformat(),
            "finishedAt": self.finished_at.isoformat() if self.finished_at else None,
            "companies": self.companies,
            "transactions": {
                "settled": [
                    {
                        "companyId": s.company_id,
                        "transactionId": s.transaction_id,
                        "type": s.type,
                        "status": s.status,
                    }
                    for s in self.settled
                ],
                "pending": [
                    {
                        "companyId": p.company_id,
                        "transactionId": p.transaction_id,
                        "type": p.type,
                        "reason": p.reason,
                    }
                    for p in self.pending
                ],
            },
            "balances": {
                "checked": self.balances_checked,
                "differences": [
                    {
                        "companyId": d.company_id,
                        "userId": d.user_id,
                        "budgetId": d.budget_id,
                        "cardId": d.card_id,
                        "currency": d.currency,
                        "ledger": from_minor(d.ledger_minor, d.currency),
                        "provider": from_minor(d.provider_minor, d.currency),
                        "difference": from_minor(d.difference_minor, d.currency),
                        "source": d.source,
                        "note": d.note,
                    }
                    for d in self.differences
                ],
                "unchecked": [
                    {
                        "companyId": u.company_id,
                        "userId": u.user_id,
                        "source": u.source,
                        "accountId": u.account_id,
                        "cardId": u.card_id,
                        "balances": u.balances,
                        "reason": u.reason,
                    }
                    for u in self.unchecked
                ],
            },
            "errors": [
                {"companyId": e.company_id, "stage": e.stage, "error": e.error} for e in self.errors
            ],
        }

    def to_json(self) -> str:
        """One line of JSON; amounts are exact decimal numbers."""
        rendered = json.dumps(self.as_dict(), default=amount_for_json, separators=(",", ":"))
        return exact_json_numbers(rendered.encode()).decode()

    def summary(self) -> str:
        scope = (
            f"company {self.company_id}"
            if self.company_id is not None
            else f"{len(self.companies)} company(ies)"
        )
        lines = [
            f"reconciliation of {scope}",
            f"transactions: {len(self.settled)} settled, {len(self.pending)} still pending",
        ]
        lines += [
            f"  settled: company {s.company_id} transaction {s.transaction_id} {s.type} -> "
            f"{s.status}"
            for s in self.settled
        ]
        lines += [
            f"  pending: company {p.company_id} transaction {p.transaction_id} {p.type}: {p.reason}"
            for p in self.pending
        ]
        lines.append(
            f"balances: {self.balances_checked} checked, {len(self.differences)} "
            f"difference(s), {len(self.unchecked)} unchecked account(s)"
        )
        for d in self.differences:
            if d.card_id is not None:
                where = f"card {d.card_id}"
            elif d.budget_id:
                where = f"budget {d.budget_id}"
            elif d.user_id is None:
                where = "custody"
            else:
                where = "unmirrored provider budget"
            lines.append(
                f"  difference: company {d.company_id}{_user(d.user_id)} {where} {d.currency}: "
                f"ledger {from_minor(d.ledger_minor, d.currency)}, provider "
                f"{from_minor(d.provider_minor, d.currency)}, difference "
                f"{from_minor(d.difference_minor, d.currency)}" + (f" ({d.note})" if d.note else "")
            )
        lines += [
            f"  unchecked: company {u.company_id}{_user(u.user_id)} {u.source} "
            + (f"card {u.card_id}" if u.card_id is not None else f"account {u.account_id}")
            + f" ({u.balances} balance(s)): {u.reason}"
            for u in self.unchecked
        ]
        lines += [f"  error: company {e.company_id} {e.stage}: {e.error}" for e in self.errors]
        lines.append(
            "reconciliation OK" if self.ok else "reconciliation FOUND PROBLEMS (see above)"
        )
        return "\n".join(lines)


def _user(user_id: int | None) -> str:
    return "" if user_id is None else f" user {user_id}"
