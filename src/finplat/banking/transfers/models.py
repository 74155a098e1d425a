"""Budget transfers need no table of their own: each is a `transactions` row (type
`BUDGET_TRANSFER` or `MASTER_TRANSFER`) with its ledger reservation and provider key, and its
`ExternalReferenceId` is claimed in `idempotency_keys` (scope `user-to-master-transfer`)."""

from __future__ import annotations
