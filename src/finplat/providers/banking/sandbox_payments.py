"""Sandbox banking provider: payments (mixed into the composed provider in sandbox.py)."""

from __future__ import annotations

from finplat.providers.banking.sandbox_budgets import SandboxBankingCore

OPERATIONS: tuple[str, ...] = ()


class SandboxPayments(SandboxBankingCore):
    pass
