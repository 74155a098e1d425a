"""Sandbox banking provider: payees (mixed into the composed provider in sandbox.py)."""

from __future__ import annotations

from finplat.providers.banking.sandbox_budgets import SandboxBankingCore

OPERATIONS: tuple[str, ...] = ()


class SandboxPayees(SandboxBankingCore):
    pass
