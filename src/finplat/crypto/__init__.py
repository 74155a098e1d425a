"""Crypto rails (spec: `/api/v2/crypto-virtual-accounts`): pay-in addresses, stablecoin
deposits and the user's crypto balances."""
