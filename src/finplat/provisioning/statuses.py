"""Provider approval states of a user.

The banking provider's values are the spec's (`NOT_STARTED`, `PENDING`, `pending_documents`,
`rejected`) plus `approved` once its account is open; the card and switch providers use
upper-case states. `NOT_STARTED` means the provider is selected but nothing was sent yet.
"""

from __future__ import annotations

NOT_STARTED = "NOT_STARTED"
PENDING = "PENDING"

# Banking provider.
PENDING_DOCUMENTS = "pending_documents"
REJECTED_BANKPROV = "rejected"
APPROVED_BANKPROV = "approved"

# Card and switch providers.
APPROVED = "APPROVED"
REJECTED = "REJECTED"
ELIGIBLE = "ELIGIBLE"  # switch provider: approved, link created with the first card
