"""Imports every model so that `metadata` describes the whole schema (Alembic, tests)."""

from finplat.auth.models import ApiKey
from finplat.companies.models import Company
from finplat.db.base import Base
from finplat.events.models import Event, WebhookAttempt, WebhookDelivery
from finplat.idempotency.models import IdempotencyKey
from finplat.ledger.models import LedgerAccount, LedgerBalance, LedgerEntry, LedgerTransfer
from finplat.providers.funding.models import SandboxFundingConfirmation
from finplat.tiers.models import CardProduct, Tier
from finplat.users.models import User

metadata = Base.metadata

__all__ = [
    "ApiKey",
    "CardProduct",
    "Company",
    "Event",
    "IdempotencyKey",
    "LedgerAccount",
    "LedgerBalance",
    "LedgerEntry",
    "LedgerTransfer",
    "SandboxFundingConfirmation",
    "Tier",
    "User",
    "WebhookAttempt",
    "WebhookDelivery",
    "metadata",
]
