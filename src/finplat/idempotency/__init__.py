"""Idempotency keys: a retried request gets the first response and never a second effect."""
