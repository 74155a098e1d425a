"""Wallet withdrawals (`bankprov-to-wallet/initiate` and `/confirm`): a user's stablecoins
sent to an external wallet, confirmed with an emailed one-time code."""
