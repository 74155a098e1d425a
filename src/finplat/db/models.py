"""Imports every model so that `metadata` describes the whole schema (Alembic, tests)."""

from finplat.auth.models import ApiKey, OperatorKey
from finplat.authorization import models as authorization_models
from finplat.banking import models as banking_models
from finplat.banking.fx import models as fx_models
from finplat.banking.payees import models as payees_models
from finplat.banking.payouts import models as payouts_models
from finplat.banking.transfers import models as transfers_models
from finplat.bankprov_onboarding.models import BankprovApplication, BankprovDocument
from finplat.business.models import AssociatedPerson, BusinessApplication, BusinessDocument
from finplat.cards import models as cards_models
from finplat.cards.discounts import models as card_discounts_models
from finplat.cards.funding import models as cards_funding_models
from finplat.cards.transactions import models as card_transactions_models
from finplat.companies.models import Company
from finplat.crypto.addresses import models as crypto_addresses_models
from finplat.crypto.cardloads import models as crypto_cardloads_models
from finplat.crypto.cardprov import models as crypto_cardprov_models
from finplat.crypto.deposits import models as crypto_deposits_models
from finplat.crypto.edd import models as crypto_edd_models
from finplat.crypto.exchange import models as crypto_exchange_models
from finplat.crypto.transfers import models as crypto_transfers_models
from finplat.crypto.withdrawals import models as crypto_withdrawals_models
from finplat.db.base import Base
from finplat.events.models import Event, WebhookAttempt, WebhookDelivery
from finplat.idempotency.models import IdempotencyKey
from finplat.kyc.models import KycSubmission
from finplat.ledger.models import LedgerAccount, LedgerBalance, LedgerEntry, LedgerTransfer
from finplat.loyalty import models as loyalty_models
from finplat.mor.cards import models as mor_cards_models
from finplat.mor.children import models as mor_children_models
from finplat.mor.identity import models as mor_identity_models
from finplat.mor.kyb import models as mor_kyb_models
from finplat.partner_hosted import models as partner_hosted_models
from finplat.payments.collections import models as payment_collections_models
from finplat.payments.mandates import models as payment_mandates_models
from finplat.payments.requests import models as payment_requests_models
from finplat.providers.banking.sandbox import models as sandbox_banking_models
from finplat.providers.banking_onboarding.sandbox.models import (
    SandboxBankprovAccount,
    SandboxBankprovDocument,
    SandboxBankprovInformationRequest,
)
from finplat.providers.business_onboarding.sandbox.models import (
    SandboxBusinessApplication,
    SandboxBusinessDocument,
    SandboxBusinessPerson,
)
from finplat.providers.callbacks import ProviderCallback
from finplat.providers.cards.sandbox import models as sandbox_cards_models
from finplat.providers.cards.sandbox.holder_accounts import SandboxHolderAccount
from finplat.providers.crypto.sandbox import card_transfers as sandbox_crypto_card_models
from finplat.providers.crypto.sandbox import withdrawals as sandbox_crypto_withdrawals
from finplat.providers.crypto.sandbox.models import SandboxDepositAddress
from finplat.providers.funding.sandbox.models import SandboxFundingConfirmation
from finplat.providers.identity.sandbox.models import SandboxAccessToken, SandboxApplicant
from finplat.providers.messaging.sandbox.models import SandboxMailboxMessage
from finplat.providers.sandbox.faults import SandboxFault
from finplat.providers.sandbox.models import SandboxCallback
from finplat.provisioning.models import ProviderAccount
from finplat.referrals import models as referral_models
from finplat.tiers.models import CardProduct, Tier
from finplat.transactions import models as transactions_models
from finplat.users.models import User
from finplat.vouchers import models as voucher_models
from finplat.vouchers.redemptions import models as voucher_redemption_models
from finplat.vouchers.settings import models as voucher_settings_models

metadata = Base.metadata

# Whole modules, so each part of banking and cards adds its tables without touching this file.
MODEL_MODULES = (
    banking_models,
    fx_models,
    payees_models,
    payouts_models,
    transfers_models,
    sandbox_banking_models,
    transactions_models,
    cards_models,
    cards_funding_models,
    card_discounts_models,
    card_transactions_models,
    partner_hosted_models,
    authorization_models,
    sandbox_cards_models,
    payment_requests_models,
    payment_mandates_models,
    payment_collections_models,
    crypto_addresses_models,
    crypto_deposits_models,
    crypto_exchange_models,
    crypto_transfers_models,
    crypto_edd_models,
    crypto_withdrawals_models,
    sandbox_crypto_withdrawals,
    crypto_cardprov_models,
    crypto_cardloads_models,
    sandbox_crypto_card_models,
    voucher_settings_models,
    voucher_models,
    voucher_redemption_models,
    referral_models,
    loyalty_models,
    mor_children_models,
    mor_identity_models,
    mor_kyb_models,
    mor_cards_models,
)

__all__ = [
    "MODEL_MODULES",
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
    "OperatorKey",
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
    "SandboxMailboxMessage",
    "Tier",
    "User",
    "WebhookAttempt",
    "WebhookDelivery",
    "metadata",
]
