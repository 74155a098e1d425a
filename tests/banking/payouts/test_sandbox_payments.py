"""The sandbox banking provider's payments: its price list and its proof of execution."""

from __future__ import annotations

from decimal import Decimal

import httpx
import pytest
from fastapi import FastAPI

from finplat.providers.banking.port import PaymentStatus
from finplat.providers.banking.sandbox.payments import quote
from finplat.providers.errors import ProviderRejected
from finplat.transactions import service as transactions
from tests.banking.payouts.steps import pay, payout_setup, terms


@pytest.mark.parametrize(
    ("method", "fee_minor"),
    [("SEPA.CREDITTRANSFER", 0), ("SEPA.INSTANT", 50), ("FPS", 0), ("SWIFT", 1500)],
)
def test_the_fee_depends_on_the_payment_method(method: str, fee_minor: int) -> None:
    price = quote(payment_method=method, amount_minor=10000, currency="EUR", debit_currency="EUR")
    assert price.fee_minor == fee_minor
    assert price.debit_amount_minor == 10000
    assert price.rate == 1


def test_a_conversion_takes_the_spread_and_rounds_the_debit_up() -> None:
    # 100.00 USD from EUR: mid 1.08 USD per EUR, less 0.5% = 1.074600; 100 / 1.0746 = 93.0578...
    price = quote(payment_method="SWIFT", amount_minor=10000, currency="USD", debit_currency="EUR")
    assert price.rate == Decimal("1.074600")
    assert price.debit_amount_minor == 9306
    assert (price.debit_currency, price.fee_minor) == ("EUR", 1500)
    # The payee always gets at least the amount at the quoted rate.
    assert Decimal(price.debit_amount_minor) * price.rate >= Decimal(price.amount_minor)


def test_an_unknown_method_or_currency_is_refused() -> None:
    with pytest.raises(ProviderRejected):
        quote(payment_method="CHEQUE", amount_minor=1, currency="EUR", debit_currency="EUR")
    with pytest.raises(ProviderRejected):
        quote(payment_method="SWIFT", amount_minor=1, currency="JPY", debit_currency="EUR")


async def test_a_payment_confirmation_exists_only_once_it_completed(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    user, budget, payee = await payout_setup(api)
    payout = await pay(api, user, terms(user, budget, payee, 42))
    company = (await api.get("/api/v2/company/configuration")).json()["CompanyId"]
    banking = app.state.providers.banking
    key = await _provider_key(app, company, payout["PayoutId"])
    payment = await banking.payment_by_key(company_id=company, idempotency_key=key)
    with pytest.raises(ProviderRejected) as refused:
        await banking.payment_confirmation(company_id=company, payment_id=payment.payment_id)
    assert (refused.value.status, refused.value.code) == (400, "PAYMENT_NOT_COMPLETED")
    with pytest.raises(ProviderRejected) as unknown:
        await banking.payment_confirmation(company_id=company + 1, payment_id=payment.payment_id)
    assert unknown.value.status == 404
    await banking.advance_payment(
        company_id=company, payment_id=payment.payment_id, status=PaymentStatus.COMPLETED
    )
    proof = await banking.payment_confirmation(company_id=company, payment_id=payment.payment_id)
    assert int(proof.payment_id) > 0
    assert proof.status is PaymentStatus.COMPLETED
    assert proof.amount_minor == 4200
    assert proof.beneficiary_name == "Acme GmbH"
    assert proof.beneficiary_account_last4 == "3000"
    assert proof.payment_method == "SEPA.CREDITTRANSFER"
    assert proof.confirmation_reference.startswith("E2E")


async def _provider_key(app: FastAPI, company_id: int, tx_id: int) -> str:
    async with app.state.session_factory() as session:
        tx = await transactions.get(session, company_id=company_id, transaction_id=tx_id)
        assert tx.provider_key is not None
        return tx.provider_key
