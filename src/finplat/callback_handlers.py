"""Imports every module that registers a provider callback handler (see providers.inbound)."""

from __future__ import annotations

import importlib

HANDLER_MODULES = (
    "finplat.kyc.callbacks",
    "finplat.bankprov_onboarding.callbacks",
    "finplat.business.callbacks",
    "finplat.banking.incoming",
    "finplat.banking.payouts.callbacks",
    "finplat.payments.requests.callbacks",
    "finplat.payments.mandates.callbacks",
    "finplat.cards.callbacks",
    "finplat.cards.transactions.callbacks",
    "finplat.crypto.deposits.callbacks",
    "finplat.crypto.exchange.callbacks",
    "finplat.crypto.withdrawals.callbacks",
    "finplat.crypto.cardloads.callbacks",
)


def load() -> None:
    for name in HANDLER_MODULES:
        importlib.import_module(name)
