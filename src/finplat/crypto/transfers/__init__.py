"""Crypto transfers: every flow that moves a user's crypto out (today the crypto-to-fiat
`bankprov-deposits`), with one status each."""
