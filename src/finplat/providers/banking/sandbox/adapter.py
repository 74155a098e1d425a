"""The sandbox banking provider, composed of one part per concern (each in its own module,
all sharing `SandboxBankingCore`'s simulator and balance primitive)."""

from __future__ import annotations

from finplat.providers.banking.sandbox import (
    budgets,
    fx,
    mandates,
    payees,
    payment_requests,
    payments,
    transfers,
)
from finplat.providers.banking.sandbox.fx import SandboxFx
from finplat.providers.banking.sandbox.mandates import SandboxMandates
from finplat.providers.banking.sandbox.payees import SandboxPayees
from finplat.providers.banking.sandbox.payment_requests import SandboxPaymentRequests
from finplat.providers.banking.sandbox.payments import SandboxPayments
from finplat.providers.banking.sandbox.transfers import SandboxTransfers

OPERATIONS = (
    budgets.OPERATIONS
    + payees.OPERATIONS
    + fx.OPERATIONS
    + payments.OPERATIONS
    + transfers.OPERATIONS
    + payment_requests.OPERATIONS
    + mandates.OPERATIONS
)


class SandboxBanking(
    SandboxPayees,
    SandboxFx,
    SandboxPayments,
    SandboxMandates,
    SandboxTransfers,
    SandboxPaymentRequests,
):
    """Budgets and balances, payees, quotes and trades, payments, transfers, payment requests,
    mandates and collections."""
