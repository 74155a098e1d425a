"""Crypto card loads: `POST /api/v2/card-loads/crypto` (issue 33, item 7)."""
