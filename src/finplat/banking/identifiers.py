"""The shapes of the identifiers banking hands out, stated in the document so that anything
else (a guess, a provider's id, text with control characters) is refused as invalid input
before it reaches a query."""

from __future__ import annotations

BUDGET_ID_PATTERN = r"^bud_[0-9a-f]{24}$"
BALANCE_ID_PATTERN = r"^bal_[0-9a-f]{24}$"
PAYEE_ID_PATTERN = r"^pye_[0-9a-f]{24}$"
QUOTE_ID_PATTERN = r"^qt_[0-9a-f]{24}$"
# The banking provider's account id is the provider's own format: letters, digits, '_', '-'.
ACCOUNT_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
