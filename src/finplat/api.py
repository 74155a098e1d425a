"""Every router the application serves, in one list: the API's own, always on, and the
sandbox's, served only while the sandbox providers run (`FINPLAT_SANDBOX`).

A new endpoint module is added here and nowhere else; `finplat.app` includes these lists.
"""

from __future__ import annotations

from fastapi import APIRouter

from finplat.authorization.endpoints import router as authorization_rules_router
from finplat.banking.endpoints import router as banking_router
from finplat.banking.fx.endpoints import router as fx_router
from finplat.banking.payees.endpoints import router as payees_router
from finplat.banking.payouts.endpoints import router as payouts_router
from finplat.banking.transfers.endpoints import router as transfers_router
from finplat.bankprov_onboarding.endpoints import router as bankprov_onboarding_router
from finplat.business.endpoints import router as business_router
from finplat.cards.controls.endpoints import router as card_controls_router
from finplat.cards.discounts.endpoints import router as card_discounts_router
from finplat.cards.endpoints import router as cards_router
from finplat.cards.funding.endpoints import router as card_funding_router
from finplat.cards.physical.endpoints import router as physical_cards_router
from finplat.cards.transactions.endpoints import router as card_transactions_router
from finplat.cards.transactions.provider_endpoints import (
    router as provider_authorizations_router,
)
from finplat.companies.endpoints import router as company_router
from finplat.crypto.addresses.endpoints import router as crypto_addresses_router
from finplat.crypto.cardloads.endpoints import router as crypto_card_loads_router
from finplat.crypto.cardprov.endpoints import router as crypto_cardprov_router
from finplat.crypto.cardprov_to_bankprov.endpoints import router as crypto_card_to_bank_router
from finplat.crypto.deposits.endpoints import router as crypto_deposits_router
from finplat.crypto.edd.endpoints import router as crypto_edd_router
from finplat.crypto.exchange.endpoints import router as crypto_exchange_router
from finplat.crypto.transfers.endpoints import router as crypto_transfers_router
from finplat.crypto.withdrawals.endpoints import router as crypto_withdrawals_router
from finplat.events.endpoints import router as events_router
from finplat.http.health import router as health_router
from finplat.kyc.endpoints import router as kyc_router
from finplat.loyalty.endpoints import router as loyalty_router
from finplat.mor.analytics.endpoints import router as mor_analytics_router
from finplat.mor.cards.endpoints import router as mor_cards_router
from finplat.mor.catalogue.endpoints import router as mor_catalogue_router
from finplat.mor.children.endpoints import router as mor_children_router
from finplat.mor.identity.endpoints import router as mor_identity_router
from finplat.mor.kyb.endpoints import router as mor_kyb_router
from finplat.mor.statement.endpoints import router as mor_statement_router
from finplat.mor.wallets.endpoints import router as mor_wallets_router
from finplat.partner_hosted.endpoints import router as partner_balances_router
from finplat.payments.collections.endpoints import router as collections_router
from finplat.payments.mandates.endpoints import router as mandates_router
from finplat.payments.requests.endpoints import router as payment_requests_router
from finplat.providers.endpoints import router as provider_callbacks_router
from finplat.provisioning.endpoints import router as provisioning_router
from finplat.referrals.endpoints import admin as referral_admin_router
from finplat.referrals.endpoints import router as referrals_router
from finplat.sandbox.banking.endpoints import router as sandbox_banking_router
from finplat.sandbox.banking.payout_endpoints import router as sandbox_payouts_router
from finplat.sandbox.cards.authorization_endpoints import router as card_authorizations_router
from finplat.sandbox.cards.deposit_endpoints import router as card_deposit_router
from finplat.sandbox.cards.endpoints import router as sandbox_cards_router
from finplat.sandbox.cards.widget_page import router as card_widget_router
from finplat.sandbox.crypto.card_transfer_endpoints import router as sandbox_crypto_card_router
from finplat.sandbox.crypto.endpoints import router as sandbox_crypto_router
from finplat.sandbox.crypto.withdrawals import router as sandbox_crypto_withdrawals_router
from finplat.sandbox.endpoints import router as sandbox_router
from finplat.sandbox.hosted_kyc import router as hosted_kyc_router
from finplat.sandbox.mor_kyb import router as sandbox_mor_kyb_router
from finplat.sandbox.payments.endpoints import router as sandbox_payments_router
from finplat.sandbox.vouchers.endpoints import router as sandbox_vouchers_router
from finplat.tiers.endpoints import router as tiers_router
from finplat.transactions.endpoints import router as transactions_router
from finplat.users.endpoints import router as users_router
from finplat.vouchers.endpoints import router as vouchers_router
from finplat.vouchers.groups.endpoints import router as voucher_groups_router
from finplat.vouchers.redemptions.endpoints import router as voucher_redemptions_router
from finplat.vouchers.settings.endpoints import router as voucher_settings_router

# The OpenAPI document lists the operations in this order.
ROUTERS: tuple[APIRouter, ...] = (
    health_router,
    users_router,
    tiers_router,
    company_router,
    events_router,
    kyc_router,
    provisioning_router,
    provider_callbacks_router,
    provider_authorizations_router,
    bankprov_onboarding_router,
    business_router,
    banking_router,
    payees_router,
    fx_router,
    payouts_router,
    transfers_router,
    payment_requests_router,
    mandates_router,
    collections_router,
    transactions_router,
    crypto_addresses_router,
    crypto_deposits_router,
    crypto_exchange_router,
    crypto_transfers_router,
    crypto_withdrawals_router,
    crypto_cardprov_router,
    crypto_card_to_bank_router,
    crypto_card_loads_router,
    crypto_edd_router,
    card_funding_router,
    physical_cards_router,
    cards_router,
    card_transactions_router,
    card_controls_router,
    authorization_rules_router,
    partner_balances_router,
    voucher_settings_router,
    voucher_groups_router,
    vouchers_router,
    voucher_redemptions_router,
    card_discounts_router,
    referral_admin_router,
    referrals_router,
    loyalty_router,
    mor_catalogue_router,
    mor_wallets_router,
    mor_statement_router,
    mor_analytics_router,
    mor_children_router,
    mor_kyb_router,
    mor_identity_router,
    mor_cards_router,
)

SANDBOX_ROUTERS: tuple[APIRouter, ...] = (
    sandbox_router,
    hosted_kyc_router,
    sandbox_banking_router,
    sandbox_payouts_router,
    sandbox_payments_router,
    card_authorizations_router,
    card_deposit_router,
    sandbox_crypto_router,
    sandbox_crypto_withdrawals_router,
    sandbox_crypto_card_router,
    sandbox_cards_router,
    sandbox_mor_kyb_router,
    card_widget_router,
    sandbox_vouchers_router,
)
