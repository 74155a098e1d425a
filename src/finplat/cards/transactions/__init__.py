"""Card transactions: purchases at merchants, from the real-time decision to clearing."""
