"""The tenancy matrix, generated from the OpenAPI document.

For every operation that takes an identifier (in the path, the query or the body), company B
calls it with company A's real identifiers and with identifiers that exist nowhere: both must
get the same answer, and B's calls must change nothing. Every list B can read must show none
of A's data. A's own calls prove the identifiers were real (so the matrix cannot pass by
seeding nothing). An identifier the matrix does not know how to seed fails the test until it
is taught below, so a new route cannot slip past.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.db.models import metadata
from finplat.errors import NotFound
from finplat.http.rate_limit import ApiKeyRateLimiter
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.users.models import User
from tests.banking import steps as banking_steps
from tests.banking.fx.steps import quoted
from tests.banking.payees.steps import payee_body, verified_payee
from tests.banking.payouts import steps as payout_steps
from tests.bankprov_onboarding.steps import documents as bankprov_documents_parts
from tests.bankprov_onboarding.steps import onboarding_fields
from tests.bankprov_onboarding.steps import proof as bankprov_proof
from tests.business import steps as business_steps
from tests.cards import steps as card_steps
from tests.conftest import Tenant, TenantFactory
from tests.crypto import card_steps as crypto_card_steps
from tests.crypto import steps as crypto_steps
from tests.crypto import withdrawal_steps
from tests.documents import samples
from tests.factories import user_payload
from tests.payments import steps as payment_steps
from tests.referrals import steps as referral_steps

IDENTIFIER = re.compile(r"Id$", re.IGNORECASE)
MISSING_INT = 987_654_321


@dataclass
class Seeded:
    """Company A's resources."""

    user_id: int
    external_user_id: str
    email: str
    personal_tier_id: int
    business_tier_id: int
    event_id: str
    delivery_id: str
    company_name: str
    person_id: int  # an associated person of A's business user's application
    business_user_id: int  # that business user: the business onboarding routes' `userId`
    banking: SeededBanking  # a user with an open bank account and money moved: banking routes
    card: SeededCard  # a user with an active card: the card routes
    company_id: int  # the admin routes' `companyId`
    voucher_group_id: str  # a voucher group holding one voucher
    redemption_id: str  # a redemption of it by the card holder, waiting for its code
    crypto: SeededCrypto  # a verified user with a pay-in address and a deposit: crypto routes
    referral_program_id: str  # A's referral programme
    referral_reward_id: str  # the welcome reward of `user_id`, referred by the card holder
    referral_boost_id: str  # a boost of the programme
    referral_assignment_id: str  # the card holder's welcome reward, assigned as a voucher
    loyalty: SeededLoyalty | None = None  # a programme, a merchant with a MID, an import config
    mor_child_id: int | None = None  # a child company A created (A enabled for MOR)
    mor_load_request_id: int = 0  # a MOR load request for the card, by its holder

    @property
    def markers(self) -> set[str]:
        """Strings unique to A: none may appear in anything B reads."""
        return self.loyalty_markers | {
            self.external_user_id,
            self.email,
            self.event_id,
            self.delivery_id,
            self.company_name,
            self.banking.account_id,
            self.banking.budget_id,
            self.banking.payee_id,
            self.banking.payment_request_id,
            self.banking.mandate_id,
            self.banking.collection_id,
            self.crypto.address,
            self.crypto.deposit_id,
            self.crypto.quote_id,
            self.crypto.transfer_id,
            self.crypto.withdrawal_id,
            self.crypto.cardprov_quote_id,
            self.crypto.card_to_bank_quote_id,
            self.crypto.load_id,
        }

    @property
    def seeded_loyalty(self) -> SeededLoyalty:
        assert self.loyalty is not None
        return self.loyalty

    @property
    def loyalty_markers(self) -> set[str]:
        return {self.loyalty.mid, self.loyalty.merchant_name} if self.loyalty else set()


@dataclass
class SeededBanking:
    user_id: int
    account_id: str
    budget_id: str
    other_budget_id: str
    balance_id: str
    payee_id: str
    quote_id: str
    approval_id: str
    payout_id: int
    batch_id: str
    payment_request_id: str
    mandate_id: str
    collection_id: str


@dataclass
class SeededCrypto:
    user_id: int
    address: str
    deposit_id: str
    quote_id: str
    transfer_id: str
    withdrawal_id: str  # a wallet withdrawal waiting for its one-time code
    cardprov_quote_id: str  # an open bankprov-to-cardprov quote
    load_id: str  # a pending crypto card load
    card_to_bank_quote_id: str  # an open cardprov-to-bankprov quote


@dataclass
class SeededLoyalty:
    program_id: int
    merchant_id: int
    mid_id: int
    mid: str
    merchant_name: str
    config_id: int


@dataclass
class SeededCard:
    user_id: int
    card_id: int
    card_type_id: int
    card_transaction_id: int  # a purchase with the card, held
    authorization_id: str  # its network id
    rule_id: int  # an authorization rule on the card
    bin_range_id: int  # the card's BIN range


# How to fill each identifier: (A's value, a value that exists for nobody).
IDENTIFIERS: dict[str, tuple[Callable[[Seeded], Any], Any]] = {
    "userId": (lambda s: s.user_id, MISSING_INT),
    "externalUserId": (lambda s: s.external_user_id, "nobody-has-this-id"),
    "tierId": (lambda s: s.business_tier_id, MISSING_INT),
    "TierId": (lambda s: s.personal_tier_id, MISSING_INT),
    "eventId": (lambda s: s.event_id, "evt_" + "0" * 32),
    "deliveryId": (lambda s: s.delivery_id, "whd_" + "0" * 32),
    "personId": (lambda s: s.person_id, MISSING_INT),
    "businessUserId": (lambda s: s.business_user_id, MISSING_INT),
    "bankingUserId": (lambda s: s.banking.user_id, MISSING_INT),
    "AccountId": (lambda s: s.banking.account_id, "bp_acc_" + "0" * 24),
    "budgetId": (lambda s: s.banking.budget_id, "bud_" + "0" * 24),
    "BudgetId": (lambda s: s.banking.budget_id, "bud_" + "0" * 24),
    "DestinationBudgetId": (lambda s: s.banking.other_budget_id, "bud_" + "f" * 24),
    "balanceId": (lambda s: s.banking.balance_id, "bal_" + "0" * 24),
    "payeeId": (lambda s: s.banking.payee_id, "pye_" + "0" * 24),
    "PayeeId": (lambda s: s.banking.payee_id, "pye_" + "0" * 24),
    "QuoteId": (lambda s: s.banking.quote_id, "qt_" + "0" * 24),
    "approvalId": (lambda s: s.banking.approval_id, "pap_" + "0" * 24),
    "ApprovalId": (lambda s: s.banking.approval_id, "pap_" + "0" * 24),
    "payoutId": (lambda s: s.banking.payout_id, MISSING_INT),
    "id": (lambda s: s.banking.payout_id, MISSING_INT),  # /api/v2/transactions/{id}
    "batchId": (lambda s: s.banking.batch_id, "bp_bat_" + "0" * 24),
    "requestId": (lambda s: s.banking.payment_request_id, "prq_" + "0" * 24),
    "mandateId": (lambda s: s.banking.mandate_id, "mdt_" + "0" * 24),
    "MandateId": (lambda s: s.banking.mandate_id, "mdt_" + "0" * 24),
    "collectionId": (lambda s: s.banking.collection_id, "col_" + "0" * 24),
    "cardUserId": (lambda s: s.card.user_id, MISSING_INT),
    "UserId": (lambda s: s.card.user_id, MISSING_INT),
    "cardId": (lambda s: s.card.card_id, MISSING_INT),
    "CardId": (lambda s: s.card.card_id, MISSING_INT),
    "CardTypeId": (lambda s: s.card.card_type_id, MISSING_INT),
    "cardTypeId": (lambda s: s.card.card_type_id, MISSING_INT),
    "cardTransactionId": (lambda s: s.card.card_transaction_id, MISSING_INT),
    "authorizationId": (lambda s: s.card.authorization_id, "cardprov_auth_" + "0" * 24),
    "ruleId": (lambda s: s.card.rule_id, MISSING_INT),
    "BinRangeId": (lambda s: s.card.bin_range_id, MISSING_INT),
    "loadRequestId": (lambda s: s.mor_load_request_id, MISSING_INT),
    "cryptoUserId": (lambda s: s.crypto.user_id, MISSING_INT),
    "depositId": (lambda s: s.crypto.deposit_id, "cdp_" + "0" * 24),
    "cryptoQuoteId": (lambda s: s.crypto.quote_id, "cxq_" + "0" * 24),
    "transferId": (lambda s: s.crypto.transfer_id, "ctr_" + "0" * 24),
    "TransferId": (lambda s: s.crypto.withdrawal_id, "ctr_" + "f" * 24),
    "withdrawalTransferId": (lambda s: s.crypto.withdrawal_id, "ctr_" + "f" * 24),
    "cardprovQuoteId": (lambda s: s.crypto.cardprov_quote_id, "cpq_" + "0" * 24),
    "cardToBankQuoteId": (lambda s: s.crypto.card_to_bank_quote_id, "cpq_" + "1" * 24),
    "loadId": (lambda s: s.crypto.load_id, "ccl_" + "0" * 24),
    "companyId": (lambda s: s.company_id, MISSING_INT),
    "groupId": (lambda s: s.voucher_group_id, "00000000-0000-4000-8000-000000000000"),
    "redemptionId": (lambda s: s.redemption_id, "00000000-0000-4000-8000-000000000000"),
    "programId": (lambda s: s.referral_program_id, "00000000-0000-4000-8000-000000000000"),
    "rewardId": (lambda s: s.referral_reward_id, "00000000-0000-4000-8000-000000000000"),
    "boostId": (lambda s: s.referral_boost_id, "00000000-0000-4000-8000-000000000000"),
    "assignmentId": (lambda s: s.referral_assignment_id, "00000000-0000-4000-8000-000000000000"),
    "ReferrerUserId": (lambda s: s.card.user_id, MISSING_INT),
    "ReferredUserId": (lambda s: s.user_id, MISSING_INT),
    "loyaltyProgramId": (lambda s: s.seeded_loyalty.program_id, MISSING_INT),
    "ProgramId": (lambda s: s.seeded_loyalty.program_id, MISSING_INT),
    "merchantId": (lambda s: s.seeded_loyalty.merchant_id, MISSING_INT),
    "midId": (lambda s: s.seeded_loyalty.mid_id, MISSING_INT),
    "configId": (lambda s: s.seeded_loyalty.config_id, MISSING_INT),
    "CardTransactionId": (lambda s: s.card.card_transaction_id, MISSING_INT),
    "childId": (lambda s: s.mor_child_id or MISSING_INT, MISSING_INT),
    # A's wallet: A was funded in USD; no company holds gold.
    "currency": (lambda s: "USD", "XAU"),
}
# Routes whose `userId` must be a business user's to reach their other identifiers.
BUSINESS_PATHS = "/api/v2/business/"
# Routes whose `userId` must be the user with a bank account.
BANKING_PATHS = (
    "/api/v2/banking/",
    "/api/v2/sandbox/banking/",
    "/api/v2/transactions",
    "/api/v2/payments/",
    "/api/v2/sandbox/payments/",
)
# Routes whose `userId` must be the holder of the crypto deposit.
# Routes whose `{transferId}` is a wallet withdrawal's.
WITHDRAWAL_PATHS = "/api/v2/sandbox/crypto/wallet-withdrawals/"
# Routes whose `{programId}` is a loyalty programme's (a referral programme's elsewhere).
LOYALTY_PATHS = "/api/v2/loyalty/"
CRYPTO_PATHS = (
    "/api/v2/crypto-virtual-accounts/",
    "/api/v2/sandbox/crypto/",
    "/api/v2/card-loads/",
)
# Crypto routes whose `QuoteId` is a card-provider quote's.
CARDPROV_PATH = "/api/v2/crypto-virtual-accounts/bankprov-to-cardprov"
CARD_TO_BANK_PATH = "/api/v2/crypto-virtual-accounts/cardprov-to-bankprov"
# Routes whose `userId` must be the card holder.
CARD_PATHS = (
    "/api/v2/cards",
    "/api/v2/sandbox/cards/",
    "/api/v2/card-transactions",
    "/api/v2/vouchers/",
    "/api/v2/users/{userId}/referrals/vouchers",
)
# Routes whose `{id}` is a voucher redemption's.
REDEMPTION_PATHS = ("/api/v2/vouchers/redemptions/", "/api/v2/sandbox/vouchers/redemptions/")

# Body fields named like identifiers that are the caller's own labels for something being
# created, not references to an existing resource: (method, path, field).
OWN_LABELS: set[tuple[str, str, str]] = {
    ("POST", "/api/v2/users", "ExternalUserId"),
    ("POST", "/api/v2/business/onboarding/compliance/requirements", "TaxId"),
    ("POST", "/api/v2/banking/budgets/{budgetId}/transfer", "ExternalReferenceId"),
    ("POST", "/api/v2/cards", "ExternalCardId"),
    ("POST", "/api/v2/payments/mandates", "ExternalReferenceId"),
    ("POST", "/api/v2/payments/collections", "merchantReferenceId"),
    ("POST", "/api/v2/cards", "DesignId"),  # a design of the catalogue, not a reference
    ("POST", "/api/v2/crypto-virtual-accounts/payin-address", "chain_id"),  # a network's number
    ("POST", "/api/v2/sandbox/crypto/deposits", "ChainId"),
    ("POST", "/api/v2/crypto-virtual-accounts/bankprov-to-wallet/initiate", "ChainId"),
    ("POST", "/api/v2/card-loads/crypto", "chain_id"),
    # An acquirer's merchant id: the network's label, not a reference to a resource.
    ("POST", "/api/v2/sandbox/cards/{cardId}/authorizations", "Mid"),
    ("POST", "/api/v2/loyalty/merchants/{merchantId}/ids", "Mid"),
}

# Bodies for operations that need more than identifiers: (method, path) -> body.
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/api/v2/mor/public/children/{childId}/fundings"): {"Amount": 1, "Currency": "USD"},
    ("POST", "/api/v2/users/{userId}/kyc/reusable-identity"): {"ShareToken": "sbx_share_none"},
    ("POST", "/api/v2/users/{userId}/kyc/manual"): {
        "Document": {
            "Type": "PASSPORT",
            "Number": "123456789",
            "IssuingCountry": "GB",
            "IssueDate": "2020-01-15",
        }
    },
    ("POST", "/api/v2/sandbox/users/{userId}/kyc/complete"): {"Outcome": "APPROVED"},
    ("POST", "/api/v2/business/onboarding/application"): business_steps.application_payload(),
    ("POST", "/api/v2/business/onboarding/associated-people"): business_steps.person_payload(),
    ("POST", "/api/v2/users/{userId}/kyc/bankprov/information"): {
        "Answers": [{"RequestId": "bp_irq_0", "Answer": "An answer"}]
    },
    ("POST", "/api/v2/banking/users/{userId}/budgets"): {"Name": "Tenancy"},
    ("POST", "/api/v2/mor/public/cards/{cardId}/fund"): {"Amount": 10},
    ("POST", "/api/v2/mor/public/load-requests"): {"Amount": 10},
    ("POST", "/api/v2/banking/payees"): payee_body(),
    ("POST", "/api/v2/banking/payees/{payeeId}/verify"): {"VerificationToken": "ZZZZZZZZ"},
    **{
        ("POST", path): {
            "SellCurrency": "EUR",
            "BuyCurrency": "USD",
            "Amount": 10,
            "FixedSide": "SELL",
        }
        for path in ("/api/v2/banking/quotations", "/api/v2/banking/orders/quote")
    },
    **{
        ("POST", f"/api/v2/banking/payouts{step}"): {"Amount": 10, "Currency": "EUR"}
        for step in ("", "/check", "/initiate")
    },
    ("POST", "/api/v2/banking/payouts/approvals/{approvalId}/verify"): {
        "VerificationToken": "ZZZZZZZZ"
    },
    ("POST", "/api/v2/banking/budgets/{budgetId}/transfer"): {"Amount": 1, "Currency": "EUR"},
    ("POST", "/api/v2/sandbox/banking/budgets/{budgetId}/credits"): {
        "Currency": "EUR",
        "Amount": 5,
        "Scheme": "SEPA",
        "SenderName": "Tenancy",
    },
    ("POST", "/api/v2/sandbox/banking/payouts/{payoutId}/status"): {"Status": "PROCESSING"},
    ("POST", "/api/v2/sandbox/banking/payment-batches/{batchId}/status"): {"Status": "PROCESSING"},
    ("POST", "/api/v2/payments/requests"): {"Amount": 5, "Currency": "EUR"},
    ("POST", "/api/v2/payments/mandates"): {
        "MaxAmount": 5,
        "Currency": "EUR",
        "Frequency": "MONTHLY",
    },
    ("POST", "/api/v2/payments/collections"): {
        "Amount": 1,
        "Currency": "EUR",
        "merchantReferenceId": "tenancy-b",
    },
    ("POST", "/api/v2/sandbox/payments/mandates/{mandateId}/authorisation"): {
        "Outcome": "APPROVED"
    },
    ("POST", "/api/v2/sandbox/payments/collections/{collectionId}/settlement"): {
        "Status": "COMPLETED"
    },
    ("POST", "/api/v2/cards"): {"Phone": card_steps.PHONE},
    ("POST", "/api/v2/cards/{cardId}/pin"): {"Pin": "480273"},
    ("PUT", "/api/v2/cards/{cardId}/auto-lock"): {"enabled": True},
    ("POST", "/api/v2/cards/topup"): {"Token": "USD", "Value": 10},
    ("POST", "/api/v2/cards/unload-card"): {"Currency": "USD", "Value": 1},
    ("PUT", "/api/v2/cards/fee-schedules/{tierId}"): {
        "TopupFeePercentage": 1,
        "TopupFixedFee": 0,
        "UnloadFeePercentage": 0,
        "UnloadFixedFee": 0,
        "DeclineFee": 0,
    },
    ("POST", "/api/v2/cards/auto-topup/low-balance"): {
        "Enabled": True,
        "Threshold": 10,
        "Amount": 20,
        "MonthlyLimit": 100,
    },
    ("POST", "/api/v2/cards/auto-topup/failed-tx"): {
        "Enabled": True,
        "Amount": 20,
        "MonthlyLimit": 100,
    },
    ("POST", "/api/v2/cards/auto-topup/deposit"): {
        "Enabled": True,
        "Amount": 20,
        "MonthlyLimit": 100,
        "Currency": "USDC",
    },
    ("POST", "/api/v2/sandbox/cards/{cardId}/authorizations"): {
        "Amount": 1,
        "Currency": "USD",
        "Merchant": "Tenancy",
    },
    ("POST", "/api/v2/sandbox/cards/{cardId}/deposits"): {"Amount": 1, "Currency": "USDC"},
    **{
        ("POST", f"/api/v2/sandbox/cards/{{cardId}}/authorizations/{{authorizationId}}/{step}"): {
            "Amount": 1
        }
        for step in ("clear", "reverse", "increment", "refund")
    },
    ("POST", "/api/v2/authorization/rules"): {
        "ScopeType": "CARD",
        "RuleType": "MCC_BLOCK",
        "Configuration": {"Mccs": ["0002"]},
    },
    ("PATCH", "/api/v2/authorization/rules/{ruleId}"): {"Active": True},
    ("POST", "/api/v2/sandbox/crypto/deposits/{depositId}/confirmations"): {"Blocks": 1},
    ("POST", "/api/v2/sandbox/crypto/bankprov-deposits/{transferId}/settle"): {"Outcome": "FAILED"},
    ("POST", "/api/v2/sandbox/crypto/wallet-withdrawals/{transferId}/settle"): {
        "Outcome": "FAILED"
    },
    ("POST", "/api/v2/crypto-virtual-accounts/bankprov-to-wallet/initiate"): {
        "CryptoCurrency": "USDC",
        "ChainId": 1,
        "Amount": 1,
        "DestinationAddress": "0x52908400098527886E0F7030069857D2E4169EE7",
    },
    ("POST", "/api/v2/crypto-virtual-accounts/bankprov-to-wallet/confirm"): {"Code": "000000"},
    ("POST", "/api/v2/sandbox/crypto/bankprov-to-cardprov/{transferId}/settle"): {
        "Outcome": "FAILED"
    },
    ("POST", "/api/v2/sandbox/crypto/card-loads/{loadId}/confirm"): {"Outcome": "FAILED"},
    ("POST", "/api/v2/sandbox/crypto/cardprov-to-bankprov/{transferId}/settle"): {
        "Outcome": "FAILED"
    },
    ("POST", "/api/v2/crypto-virtual-accounts/cardprov-to-bankprov/quote"): {
        "FiatCurrency": "EUR",
        "Amount": 10,
    },
    ("POST", "/api/v2/crypto-virtual-accounts/cardprov-to-bankprov/funds-decision"): {
        "Decision": "APPROVE"
    },
    ("POST", "/api/v2/crypto-virtual-accounts/bankprov-to-cardprov/quote"): {
        "FiatCurrency": "EUR",
        "Amount": 10,
    },
    ("POST", "/api/v2/crypto-virtual-accounts/bankprov-to-cardprov/funds-decision"): {
        "Decision": "APPROVE"
    },
    ("POST", "/api/v2/card-loads/crypto"): {
        "Amount": 5,
        "crypto_currency": "USDC",
        "chain_id": 1,
    },
    ("POST", "/api/v2/crypto-virtual-accounts/verification/edd"): {
        **dict.fromkeys(
            (
                "CapitalOfCompany",
                "GiftOrInheritance",
                "ProfitFromSoldOrMaturingInvestments",
                "ProfitsFromPropertySale",
                "ProfitsFromSaleOfCompany",
                "CompensationPayment",
                "Pension",
                "Other",
            ),
            "None",
        ),
        "ProfessionalSalary": {"AnnualAmount": 1, "Currency": "EUR"},
        "FileUrls": [],
    },
    ("POST", "/api/v2/crypto-virtual-accounts/exchange/quote"): {
        "CryptoCurrency": "USDC",
        "Amount": 10,
        "FiatCurrency": "EUR",
    },
    ("POST", "/api/v2/crypto-virtual-accounts/payin-address"): {
        "crypto_currency": "USDC",
        "chain_id": 1,
    },
    ("POST", "/api/v2/admin/vouchers/groups"): {"Name": "Tenancy"},
    ("POST", "/api/v2/admin/discount-codes"): {"Code": "TENANCY", "PercentOff": 10},
    ("PUT", "/api/v2/admin/discount-codes/cards/{cardId}/discount"): {"DiscountCode": None},
    ("POST", "/api/v2/admin/vouchers/groups/{groupId}/vouchers"): {"Value": 1, "Currency": "USD"},
    ("POST", "/api/v2/vouchers/redemptions"): {"VoucherCode": "VCH-0000-0000-0000-0000-0000"},
    ("POST", "/api/v2/vouchers/redemptions/{id}/verify"): {"Code": "000000"},
    ("PUT", "/api/v2/admin/referrals/program"): referral_steps.terms(),
    ("POST", "/api/v2/referrals/programs/{programId}/boosts"): {
        "Name": "Tenancy",
        "Kind": "MULTIPLIER",
        "Multiplier": 2,
        "MaximumAwards": 1,
        "FundedBudget": 1,
        "StartsAt": "2026-01-01T00:00:00Z",
        "EndsAt": "2027-01-01T00:00:00Z",
    },
    ("POST", "/api/v2/referrals/programs/{programId}/boosts/{boostId}/pause"): {
        "ExpectedProgramRevision": 2
    },
    ("POST", "/api/v2/referrals/programs/{programId}/boosts/{boostId}/resume"): {
        "ExpectedProgramRevision": 2
    },
    ("POST", "/api/v2/referrals/programs/{programId}/community/members"): {
        "Plan": "TENANCY",
        "L2Bps": 1,
        "L3Bps": 1,
    },
    ("POST", "/api/v2/referrals/programs/{programId}/community/members/{userId}/revoke"): {
        "Reason": "Tenancy"
    },
    ("PATCH", "/api/v2/loyalty/programs/{programId}"): {"Name": "Tenancy"},
    ("POST", "/api/v2/loyalty/merchants"): {"Name": "Tenancy"},
    ("POST", "/api/v2/loyalty/merchants/{merchantId}/ids"): {"Mid": "TENANCYB"},
    ("POST", "/api/v2/loyalty/import-configs"): {"Name": "Tenancy"},
}

# Required query parameters that are not identifiers: (method, path) -> values.
QUERIES: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", "/api/v2/banking/payees/required-fields"): {
        "paymentType": "COMPANY",
        "paymentMethod": "SEPA.CREDITTRANSFER",
        "currency": "EUR",
    },
    ("GET", "/api/v2/cards/physical-card-fees"): {"country": "GB"},
}

# Multipart operations: (method, path) -> the parts, as httpx `files` (text as (None, value)).
FORMS: dict[tuple[str, str], Callable[[], list[tuple[str, Any]]]] = {
    ("POST", "/api/v2/business/onboarding/application/documents"): lambda: business_document(
        "CERTIFICATE_OF_INCORPORATION"
    ),
    ("POST", "/api/v2/business/onboarding/associated-people/{personId}/documents"): lambda: (
        business_document("PASSPORT")
    ),
    ("POST", "/api/v2/banking/bankprov-onboarding"): lambda: bankprov_form(),
    ("POST", "/api/v2/users/{userId}/kyc/bankprov/documents"): lambda: bankprov_documents(),
    ("POST", "/api/loyalty-programs/transaction-import/upload/{configId}"): lambda: [
        ("File", ("history.csv", b"TransactionId,UserId,Mid,Amount,Currency,OccurredAt\n"))
    ],
}

# Where the spec prescribes another answer to another company's identifier than "does not
# exist" (for example 401 for card details of a user outside the company): (method, path) ->
# expected status.
CROSS_TENANT_STATUS: dict[tuple[str, str], int] = {("GET", "/api/v2/cards/{cardId}"): 401}


def bankprov_form() -> list[tuple[str, Any]]:
    text = [
        (name, (None, value))
        for name, values in onboarding_fields().items()
        for value in (values if isinstance(values, list) else [values])
    ]
    return [*text, *bankprov_proof()]


def business_document(document_type: str) -> list[tuple[str, Any]]:
    return [("DocumentType", (None, document_type)), ("File", ("document.pdf", samples.pdf()))]


def bankprov_documents() -> list[tuple[str, Any]]:
    return list(bankprov_documents_parts(samples.pdf()))


@pytest.fixture(autouse=True)
def _unthrottled(app: FastAPI) -> None:
    # The matrix makes a few hundred calls per company in seconds; the rate limit has its
    # own tests.
    app.state.rate_limiter = ApiKeyRateLimiter("100000/second")


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    path_params: dict[str, str]
    query: dict[str, Any]
    body_ids: dict[str, Any]
    body_required: list[str]
    has_body: bool


def resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = document
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def operations_with_identifiers(document: dict[str, Any]) -> list[Call]:
    calls = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if {"ApiKey": []} not in operation.get("security", []):
                continue  # not a company's operation (provider callbacks, hosted pages)
            params = operation.get("parameters", [])
            path_params = {p["name"]: p["name"] for p in params if p["in"] == "path"}
            query = {
                p["name"]: p["name"]
                for p in params
                if p["in"] == "query" and IDENTIFIER.search(p["name"])
            }
            body_ids: dict[str, Any] = {}
            required: list[str] = []
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                schema = resolve(document, content["application/json"]["schema"])
                body_ids = {
                    n: n
                    for n in schema.get("properties", {})
                    if IDENTIFIER.search(n) and (method.upper(), path, n) not in OWN_LABELS
                }
                required = list(schema.get("required", []))
            if path_params or query or body_ids:
                calls.append(
                    Call(
                        method.upper(), path, path_params, query, body_ids, required, bool(content)
                    )
                )
    return calls


def list_operations(document: dict[str, Any]) -> list[str]:
    return [
        path
        for path, item in document["paths"].items()
        if path.startswith("/api/v2")
        and "get" in item
        and not any(p["in"] == "path" for p in item["get"].get("parameters", []))
    ]


def untaught(calls: list[Call]) -> list[str]:
    problems = []
    for call in calls:
        for name in [*call.path_params, *call.query, *call.body_ids]:
            if name not in IDENTIFIERS:
                problems.append(f"{call.method} {call.path}: identifier {name!r}")
        known = set(call.body_ids) | set(BODIES.get((call.method, call.path), {}))
        for name in call.body_required:
            if name not in known:
                problems.append(f"{call.method} {call.path}: required body field {name!r}")
    return problems


def request_for(call: Call, given: Callable[[str], Any]) -> dict[str, Any]:
    def pick(name: str) -> Any:
        if name == "userId" and call.path.startswith(BUSINESS_PATHS):
            return given("businessUserId")
        if name == "userId" and (
            call.path.startswith(BANKING_PATHS) or call.path.endswith("/assets")
        ):
            return given("bankingUserId")
        if name == "userId" and call.path.startswith(CARD_PATHS):
            return given("cardUserId")
        if name == "userId" and call.path.startswith(CRYPTO_PATHS):
            return given("cryptoUserId")
        if name == "QuoteId" and call.path.startswith(CARDPROV_PATH):
            return given("cardprovQuoteId")
        if name == "QuoteId" and call.path.startswith(CARD_TO_BANK_PATH):
            return given("cardToBankQuoteId")
        if name == "QuoteId" and call.path.startswith(CRYPTO_PATHS):
            return given("cryptoQuoteId")
        if name == "transferId" and call.path.startswith(WITHDRAWAL_PATHS):
            return given("withdrawalTransferId")
        if name == "programId" and call.path.startswith(LOYALTY_PATHS):
            return given("loyaltyProgramId")
        if name == "id" and call.path.startswith(REDEMPTION_PATHS):
            return given("redemptionId")
        return given(name)

    path = call.path
    for name in call.path_params:
        path = path.replace("{" + name + "}", str(pick(name)))
    request: dict[str, Any] = {
        "method": call.method,
        "url": path,
        "params": {**QUERIES.get((call.method, call.path), {}), **{n: pick(n) for n in call.query}},
    }
    form = FORMS.get((call.method, call.path))
    if form is not None:
        request["files"] = form()
    elif call.has_body:
        body = dict(BODIES.get((call.method, call.path), {}))
        body.update({n: pick(n) for n in call.body_ids})
        request["json"] = body
    return request


def outcome(response: httpx.Response) -> tuple[Any, ...]:
    body = response.json() if response.content else None
    code = body.get("Code") if isinstance(body, dict) else None
    items = len(body["Items"]) if isinstance(body, dict) and "Items" in body else None
    return response.status_code, code, items


async def snapshot(session: AsyncSession) -> dict[str, str]:
    """A fingerprint of every row of every table."""
    fingerprints = {}
    for table in metadata.sorted_tables:
        rows = (await session.execute(select(table))).all()
        digest = hashlib.sha256(repr(sorted(repr(tuple(r)) for r in rows)).encode()).hexdigest()
        fingerprints[table.name] = digest
    await session.commit()  # the calls that follow reach providers: none inside a transaction
    return fingerprints


async def seed(tenant: Tenant, factory: async_sessionmaker[AsyncSession]) -> Seeded:
    client = tenant.client
    external = f"tenant-a-{uuid.uuid4().hex}"
    email = f"{external}@example.com"
    user = (
        await client.post("/api/v2/users", json=user_payload(ExternalUserId=external, Email=email))
    ).json()
    tiers = (await client.get("/api/v2/tiers")).json()["Tiers"]
    personal = next(t["Id"] for t in tiers if t["AccountType"] == "personal" and not t["IsDefault"])
    business = next(t["Id"] for t in tiers if t["AccountType"] == "business")
    await client.put(
        "/api/v2/company/configuration", json={"WebhookUrl": "http://localhost:9/hooks"}
    )
    await client.post("/api/v2/sandbox/company/funding", json={"Currency": "USD", "Amount": 77})
    sent = (await client.post("/api/v2/webhooks/test")).json()
    name = (await client.get("/api/v2/company/configuration")).json()["Name"]
    business_user_id, person_id = await business_steps.seed_person(client)
    banking = await seed_banking(client)
    card = await seed_card(client)
    crypto = await seed_crypto(client)
    seeded = Seeded(
        user["Id"],
        external,
        email,
        personal,
        business,
        sent["EventId"],
        sent["DeliveryIds"][0],
        name,
        person_id,
        business_user_id,
        banking,
        card,
        tenant.company_id,
        *await seed_vouchers(client, card),
        crypto,
        *await seed_referrals(client, factory, referrer=card.user_id, friend=user["Id"]),
    )
    seeded.loyalty = await seed_loyalty(client)
    seeded.mor_child_id = await seed_mor_child(client, name)
    seeded.mor_load_request_id = await seed_mor_load_request(client, card)
    return seeded


async def seed_mor_child(client: httpx.AsyncClient, parent_name: str) -> int | None:
    """A child company of A (named after A, so a B that reads it shows A's marker); None when
    A is not enabled for MOR, or is itself a child."""
    created = await client.post("/api/v2/mor/public/children", json={"Name": f"{parent_name} kid"})
    return int(created.json()["Id"]) if created.status_code == 201 else None


async def seed_mor_load_request(client: httpx.AsyncClient, card: SeededCard) -> int:
    """A MOR load request by the card's holder (its assignee: it was ordered for them)."""
    asked = await client.post(
        "/api/v2/mor/public/load-requests",
        json={"UserId": card.user_id, "CardId": card.card_id, "Amount": 10},
    )
    assert asked.status_code == 201, asked.text
    return int(asked.json()["Id"])


async def seed_loyalty(client: httpx.AsyncClient) -> SeededLoyalty:
    """A loyalty programme, a merchant with a MID, an import configuration."""
    program = await client.post(
        "/api/v2/loyalty/programs", json={"Name": "Tenancy", "PointsPerUnit": 1}
    )
    assert program.status_code == 201, program.text
    name, mid = f"Tenancy shop {uuid.uuid4().hex}", f"TEN{uuid.uuid4().hex[:12].upper()}"
    merchant = await client.post(
        "/api/v2/loyalty/merchants",
        json={"Name": name, "ProgramId": program.json()["Id"], "Mids": [mid]},
    )
    assert merchant.status_code == 201, merchant.text
    config = await client.post(
        "/api/v2/loyalty/import-configs",
        json={"Name": "Tenancy", "ProgramId": program.json()["Id"]},
    )
    assert config.status_code == 201, config.text
    return SeededLoyalty(
        program.json()["Id"],
        merchant.json()["Id"],
        merchant.json()["Mids"][0]["MidId"],
        mid,
        name,
        config.json()["Id"],
    )


async def seed_crypto(client: httpx.AsyncClient) -> SeededCrypto:
    """A banking user with crypto credited, a pending deposit, an accepted quote (its
    transfer pending) and an open quote."""
    user, budget = await crypto_steps.crypto_banking_user(client, "50")
    address = await crypto_steps.payin_address(client, user["Id"], "USDC", 1)
    deposit = await crypto_steps.send(client, address["Address"], 5)
    accepted = await crypto_steps.exchange_quote(client, user["Id"], budget["BudgetId"], "10")
    transfer = (await crypto_steps.accept(client, user["Id"], accepted["QuoteId"])).json()
    quote = await crypto_steps.exchange_quote(client, user["Id"], budget["BudgetId"], "10")
    withdrawal = await withdrawal_steps.initiated(
        client, user["Id"], withdrawal_steps.external_address(1), amount="1"
    )
    card = await card_steps.ordered_card(client, user)
    cardprov_quote = await crypto_card_steps.cardprov_quote(
        client, user["Id"], budget["BudgetId"], card["Id"], "10"
    )
    load = await crypto_card_steps.card_load(client, user["Id"], card["Id"], "5", key="seed")
    assert load.status_code == 201, load.text
    card_to_bank_quote = await crypto_card_steps.card_to_bank_quote(
        client, user["Id"], card["Id"], budget["BudgetId"], "10"
    )
    return SeededCrypto(
        user["Id"],
        address["Address"],
        deposit["DepositId"],
        quote["QuoteId"],
        transfer["TransferId"],
        withdrawal["TransferId"],
        cardprov_quote["QuoteId"],
        load.json()["LoadId"],
        card_to_bank_quote["QuoteId"],
    )


async def seed_referrals(
    client: httpx.AsyncClient,
    factory: async_sessionmaker[AsyncSession],
    *,
    referrer: int,
    friend: int,
) -> tuple[str, str, str, str]:
    """A referral programme delivering vouchers, `friend` referred by `referrer` (a welcome
    reward waiting), a boost of the programme, `friend` in its community, and `referrer`
    (approved) referred by a newcomer: their welcome reward released as an assigned voucher."""
    program = await referral_steps.configure(client, DeliveryMode="VOUCHER", HoldDays=0)
    made = await referral_steps.refer(client, program["Id"], referrer, friend)
    assert made.status_code == 201, made.text
    (welcome,) = await referral_steps.rewards(client, friend)
    boost = await referral_steps.boost(client, program["Id"])
    enrolled = await referral_steps.enrol(client, program["Id"], friend)
    assert enrolled.status_code == 201, enrolled.text
    newcomer = (await client.post("/api/v2/users", json=user_payload())).json()
    made = await referral_steps.refer(client, program["Id"], newcomer["Id"], referrer)
    assert made.status_code == 201, made.text
    await referral_steps.run_job(factory)
    vouchers = await client.get(f"/api/v2/users/{referrer}/referrals/vouchers")
    (assigned,) = vouchers.json()["Items"]
    return program["Id"], welcome["Id"], boost["Id"], assigned["AssignmentId"]


async def seed_vouchers(client: httpx.AsyncClient, card: SeededCard) -> tuple[str, str]:
    """A voucher group with a voucher, and a redemption of it on the card, waiting."""
    group = (await client.post("/api/v2/admin/vouchers/groups", json={"Name": "Tenancy"})).json()
    issued = await client.post(
        f"/api/v2/admin/vouchers/groups/{group['Id']}/vouchers",
        json={"Value": 5, "Currency": "USD"},
    )
    assert issued.status_code == 201, issued.text
    code = issued.json()["Vouchers"][0]["PlaintextCode"]
    started = await client.post(
        "/api/v2/vouchers/redemptions",
        json={"VoucherCode": code, "UserId": card.user_id, "CardId": card.card_id},
    )
    assert started.status_code == 201, started.text
    return str(group["Id"]), str(started.json()["Id"])


async def seed_card(client: httpx.AsyncClient) -> SeededCard:
    user = await card_steps.approved_card_user(client)
    card = await card_steps.ordered_card(client, user)
    funded = await client.post(
        "/api/v2/sandbox/company/funding", json={"Currency": "USD", "Amount": 100}
    )
    assert funded.status_code == 200, funded.text
    loaded = await client.post(
        "/api/v2/cards/topup", json={"CardId": card["Id"], "Token": "USD", "Value": 50}
    )
    assert loaded.status_code == 200, loaded.text
    held = await client.post(
        f"/api/v2/sandbox/cards/{card['Id']}/authorizations",
        params={"userId": user["Id"]},
        json={"Amount": 5, "Currency": "USD", "Merchant": "Tenancy"},
    )
    assert held.status_code == 200, held.text
    purchase = held.json()
    rule = await client.post(
        "/api/v2/authorization/rules",
        json={
            "ScopeType": "CARD",
            "CardId": card["Id"],
            "RuleType": "MCC_BLOCK",
            "Configuration": {"Mccs": ["0001"]},
        },
    )
    assert rule.status_code == 200, rule.text
    return SeededCard(
        user["Id"],
        card["Id"],
        card["CardTypeId"],
        purchase["CardTransactionId"],
        purchase["AuthorizationId"],
        rule.json()["RuleId"],
        rule.json()["BinRangeId"],
    )


async def seed_banking(client: httpx.AsyncClient) -> SeededBanking:
    """A user with an open bank account, two budgets, money, a payee, a quote and a payout
    waiting in a payment batch (its approval used, a second approval verified)."""
    user, budget = await banking_steps.funded_user(client, "1000.00", "EUR")
    other = await banking_steps.create_budget(client, user, "Second")
    payee = await verified_payee(client, user)
    quote = await quoted(client, user)
    body = payout_steps.terms(user, budget, payee, amount=10)
    payout = await payout_steps.pay(client, user, body)
    spare = await payout_steps.approved(client, user, body)
    payment_request = await payment_steps.requested(client, user["Id"])
    mandate = await payment_steps.mandate(client, user["Id"], Frequency="WEEKLY")
    assert (await payment_steps.authorise(client, mandate["Id"])).status_code == 200
    collection = await payment_steps.collect(client, mandate["Id"], 5, "tenancy")
    assert collection.status_code == 201, collection.text
    return SeededBanking(
        user_id=user["Id"],
        account_id=user["AccountId"],
        budget_id=budget["BudgetId"],
        other_budget_id=other["BudgetId"],
        balance_id=budget["Balances"][0]["BalanceId"],
        payee_id=payee["PayeeId"],
        quote_id=quote["QuoteId"],
        approval_id=spare["ApprovalId"],
        payout_id=payout["PayoutId"],
        batch_id=payout["PaymentBatchId"],
        payment_request_id=payment_request["Id"],
        mandate_id=mandate["Id"],
        collection_id=collection.json()["Id"],
    )


async def run_matrix(
    a: Tenant, b: Tenant, seeded: Seeded, session: AsyncSession, document: dict[str, Any]
) -> list[str]:
    """Every way company B could reach company A's data, and what went wrong."""
    calls = operations_with_identifiers(document)
    problems = [f"untaught: {p}" for p in untaught(calls)]
    before = await snapshot(session)
    for call in calls:
        if any(p.startswith(f"untaught: {call.method} {call.path}:") for p in problems):
            continue
        crossed_request = request_for(call, lambda n: IDENTIFIERS[n][0](seeded))
        unknown_request = request_for(call, lambda n: IDENTIFIERS[n][1])
        crossed_response = await b.client.request(**crossed_request)
        missing_response = await b.client.request(**unknown_request)
        crossed, missing = outcome(crossed_response), outcome(missing_response)
        expected = CROSS_TENANT_STATUS.get((call.method, call.path))
        if (expected is not None and crossed[0] != expected) or (
            expected is None and crossed != missing
        ):
            problems.append(f"{call.method} {call.path}: B got {crossed}, unknown id {missing}")
        problems += [
            f"{call.method} {call.path} shows {m}"
            for m in seeded.markers
            if m in crossed_response.text
        ]
    for path in list_operations(document):
        body = (await b.client.get(path)).text
        problems += [f"GET {path} shows {m}" for m in seeded.markers if m in body]
    after = await snapshot(session)
    problems += [f"B's calls changed {t}" for t in before if before[t] != after[t]]
    return problems


async def test_another_company_gets_nothing_and_changes_nothing(
    make_tenant: TenantFactory,
    session: AsyncSession,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    a = await make_tenant(f"Tenant A {uuid.uuid4().hex[:8]}", mor=True)
    b = await make_tenant("Tenant B", mor=True)
    seeded = await seed(a, session_factory)
    document = (await a.client.get("/openapi.json")).json()
    calls = operations_with_identifiers(document)
    assert len(calls) >= 6  # the document really was walked
    assert await run_matrix(a, b, seeded, session, document) == []

    # A's own identifiers were real: A gets a different answer than for unknown ids.
    for call in calls:
        own = outcome(
            await a.client.request(**request_for(call, lambda n: IDENTIFIERS[n][0](seeded)))
        )
        unknown = outcome(await a.client.request(**request_for(call, lambda n: IDENTIFIERS[n][1])))
        assert own != unknown, f"{call.method} {call.path}: the seed did not reach a resource"


async def test_a_child_company_never_sees_its_sibling_nor_its_parent(
    app: FastAPI,
    make_tenant: TenantFactory,
    session: AsyncSession,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """Two children of one MOR parent are tenants like any other two companies: the whole
    matrix holds between siblings, and a child cannot read its parent's children."""
    parent = await make_tenant(f"Parent {uuid.uuid4().hex[:8]}", mor=True)
    first, second = [
        await sibling(app, parent, f"Sibling {i} {uuid.uuid4().hex[:8]}") for i in (1, 2)
    ]
    seeded = await seed(first, session_factory)
    document = (await first.client.get("/openapi.json")).json()
    assert await run_matrix(first, second, seeded, session, document) == []
    for child in (first, second):
        children = (await child.client.get("/api/v2/mor/public/children")).json()
        assert children["Items"] == []
        other = second if child is first else first
        read = await child.client.get(f"/api/v2/mor/public/children/{other.company_id}")
        assert read.status_code == 404
    await first.client.aclose()
    await second.client.aclose()


async def sibling(app: FastAPI, parent: Tenant, name: str) -> Tenant:
    created = await parent.client.post("/api/v2/mor/public/children", json={"Name": name})
    assert created.status_code == 201, created.text
    body = created.json()
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url="http://finplat.test",
        headers={"x-api-key": body["ApiKey"]},
    )
    return Tenant(body["Id"], body["ApiKey"], 0, body["WebhookSecret"], client)


async def test_an_operation_the_matrix_cannot_seed_fails_it(app: FastAPI, tenant: Tenant) -> None:
    router = api_router()

    @router.get("/api/v2/test-gadgets/{gadgetId}")
    async def gadget(gadgetId: int, principal: CurrentPrincipal) -> dict[str, int]:
        return {"Id": gadgetId}

    app.include_router(router)
    document = (await tenant.client.get("/openapi.json")).json()
    problems = untaught(operations_with_identifiers(document))
    assert problems == ["GET /api/v2/test-gadgets/{gadgetId}: identifier 'gadgetId'"]


async def test_an_endpoint_that_ignores_tenancy_fails_the_matrix(
    app: FastAPI,
    make_tenant: TenantFactory,
    session: AsyncSession,
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """A deliberately broken endpoint that reads a user without the company filter."""
    router = api_router()

    @router.get("/api/v2/test-leaky-users/{userId}")
    async def leaky_user(
        userId: int, session: DbSession, principal: CurrentPrincipal
    ) -> dict[str, str]:
        session.info.clear()  # the broken part: drop the tenant guard, skip the repository
        user = await session.get(User, userId)
        if user is None:
            raise NotFound()
        return {"Email": user.email}

    app.include_router(router)
    a, b = await make_tenant("Leaky A", mor=True), await make_tenant("Leaky B", mor=True)
    seeded = await seed(a, session_factory)
    document = (await a.client.get("/openapi.json")).json()
    problems = await run_matrix(a, b, seeded, session, document)
    assert any(p.startswith("GET /api/v2/test-leaky-users/{userId}: B got (200") for p in problems)
    assert f"GET /api/v2/test-leaky-users/{{userId}} shows {seeded.email}" in problems
