"""Imports every model so that `metadata` describes the whole schema (Alembic, tests)."""

from finplat.auth.models import ApiKey
from finplat.bankprov_onboarding.models import BankprovApplication, BankprovDocument
from finplat.business.models import AssociatedPerson, BusinessApplication, BusinessDocument
from finplat.companies.models import Company
from finplat.db.base import Base
from finplat.events.models import Event, WebhookAttempt, WebhookDelivery
from finplat.idempotency.models import IdempotencyKey
from finplat.kyc.models import KycSubmission
from finplat.ledger.models import LedgerAccount, LedgerBalance, LedgerEntry, LedgerTransfer
from finplat.providers.banking_onboarding.models import (
    SandboxBankprovAccount,
    SandboxBankprovDocument,
    SandboxBankprovInformationRequest,
)
from finplat.providers.business_onboarding.models import (
    SandboxBusinessApplication,
    SandboxBusinessDocument,
    SandboxBusinessPerson,
)
from finplat.providers.callbacks import ProviderCallback, SandboxCallback
from finplat.providers.crypto.models import SandboxDepositAddress
from finplat.providers.faults import SandboxFault
from finplat.providers.funding.models import SandboxFundingConfirmation
from finplat.providers.identity.models import SandboxAccessToken, SandboxApplicant
from finplat.providers.sandbox_accounts import SandboxHolderAccount
from finplat.provisioning.models import ProviderAccount
from finplat.tiers.models import CardProduct, Tier
from finplat.users.models import User

metadata = Base.metadata

__all__ = [
    "ApiKey",
    "AssociatedPerson",
    "BankprovApplication",
    "BankprovDocument",
    "BusinessApplication",
    "BusinessDocument",
    "CardProduct",
    "Company",
    "Event",
    "IdempotencyKey",
    "KycSubmission",
    "LedgerAccount",
    "LedgerBalance",
    "LedgerEntry",
    "LedgerTransfer",
    "ProviderAccount",
    "ProviderCallback",
    "SandboxAccessToken",
    "SandboxApplicant",
    "SandboxBankprovAccount",
    "SandboxBankprovDocument",
    "SandboxBankprovInformationRequest",
    "SandboxBusinessApplication",
    "SandboxBusinessDocument",
    "SandboxBusinessPerson",
    "SandboxCallback",
    "SandboxDepositAddress",
    "SandboxFault",
    "SandboxFundingConfirmation",
    "SandboxHolderAccount",
    "Tier",
    "User",
    "WebhookAttempt",
    "WebhookDelivery",
    "metadata",
]
