"""Crypto flows between the banking provider and the card provider (issue 33, item 4)."""
