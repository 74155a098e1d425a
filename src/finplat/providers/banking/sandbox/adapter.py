"""The sandbox banking provider, composed of one part per concern (each in its own module,
all sharing `SandboxBankingCore`'s simulator and balance primitive)."""

from __future__ import annotations

from finplat.providers.banking import (
    sandbox_budgets,
    sandbox_fx,
    sandbox_payees,
    sandbox_payments,
    sandbox_transfers,
)
from finplat.providers.banking.sandbox_fx import SandboxFx
from finplat.providers.banking.sandbox_payees import SandboxPayees
from finplat.providers.banking.sandbox_payments import SandboxPayments
from finplat.providers.banking.sandbox_transfers import SandboxTransfers

OPERATIONS = (
    sandbox_budgets.OPERATIONS
    + sandbox_payees.OPERATIONS
    + sandbox_fx.OPERATIONS
    + sandbox_payments.OPERATIONS
    + sandbox_transfers.OPERATIONS
)


class SandboxBanking(SandboxPayees, SandboxFx, SandboxPayments, SandboxTransfers):
    """Budgets and balances, payees, quotes and trades, payments and transfers."""
