"""The double-entry ledger: the only code that changes balances."""
