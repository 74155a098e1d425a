"""The MOR merchant's wallets (its master ledger account per currency) and balances."""
