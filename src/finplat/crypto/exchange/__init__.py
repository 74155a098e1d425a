"""Crypto-to-fiat exchange: quotes, their single acceptance, and the `bankprov-deposits` the
acceptance starts."""
