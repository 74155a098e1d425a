"""GET /api/v2/transactions/{id}/bankprov/payment-confirmation: a malformed id is 400
`INVALID_PAYMENT_ID`, anything that is not a banking-provider payout is 404."""

from __future__ import annotations

import re
from decimal import Decimal

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.schemas import MAX_ID
from finplat.transactions.kinds import TransactionType
from finplat.transactions.service import PAYMENT_ID_PATTERN
from tests.banking.payees.steps import SEPA_IBAN
from tests.banking.payouts.steps import move_payout, pay, payout_setup, terms
from tests.banking.steps import banking_user, credit, default_budget
from tests.conftest import Tenant, TenantFactory
from tests.onboarding import create_user
from tests.transactions.steps import pending_transaction


async def confirmation(api: httpx.AsyncClient, payment_id: object) -> httpx.Response:
    return await api.get(f"/api/v2/transactions/{payment_id}/bankprov/payment-confirmation")


@pytest.mark.parametrize("payment_id", ["abc", "0", "-5", "007", "1.5", "1e3", str(MAX_ID + 1)])
async def test_a_malformed_payment_id_is_invalid(api: httpx.AsyncClient, payment_id: str) -> None:
    response = await confirmation(api, payment_id)
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_PAYMENT_ID"


async def test_an_unknown_payment_is_not_found(api: httpx.AsyncClient) -> None:
    response = await confirmation(api, 987_654_321)
    assert response.status_code == 404
    assert response.json()["Code"] == "PAYMENT_NOT_FOUND"


async def test_the_largest_id_is_well_formed(api: httpx.AsyncClient) -> None:
    response = await confirmation(api, MAX_ID)
    assert response.status_code == 404
    assert response.json()["Code"] == "PAYMENT_NOT_FOUND"


async def test_a_transaction_that_is_not_a_payout_has_no_confirmation(tenant: Tenant) -> None:
    user = await banking_user(tenant.client)
    budget = await default_budget(tenant.client, user["Id"])
    incoming = await credit(tenant.client, user["Id"], budget["BudgetId"], 40, "EUR")
    response = await confirmation(tenant.client, incoming["Id"])
    assert response.status_code == 404
    assert response.json()["Code"] == "PAYMENT_NOT_FOUND"


async def test_a_payout_that_never_reached_the_provider_has_no_confirmation(
    tenant: Tenant, session: AsyncSession
) -> None:
    user = await create_user(tenant.client)
    payout = await pending_transaction(
        session, company_id=tenant.company_id, user_id=user["Id"], type_=TransactionType.PAYOUT
    )
    response = await confirmation(tenant.client, payout.id)
    assert response.status_code == 404
    assert response.json()["Code"] == "PAYMENT_NOT_FOUND"


async def test_a_payout_the_provider_does_not_know_is_not_found(
    tenant: Tenant, session: AsyncSession
) -> None:
    user = await create_user(tenant.client)
    payout = await pending_transaction(
        session,
        company_id=tenant.company_id,
        user_id=user["Id"],
        type_=TransactionType.PAYOUT,
        provider_reference="987654321987",
    )
    response = await confirmation(tenant.client, payout.id)
    assert response.status_code == 404
    assert response.json()["Code"] == "PAYMENT_NOT_FOUND"


def test_the_pattern_accepts_exactly_the_ids_from_one_to_the_largest() -> None:
    pattern = re.compile(PAYMENT_ID_PATTERN)
    for good in ("1", "9", "10", "42", str(10**15), str(MAX_ID - 1), str(MAX_ID)):
        assert pattern.fullmatch(good), good
    for bad in ("", "0", "01", "-1", "+1", " 1", "1 ", str(MAX_ID + 1), str(10**16), "1" * 17):
        assert not pattern.fullmatch(bad), bad
    for n in range(MAX_ID - 2000, MAX_ID + 2000, 7):
        assert bool(pattern.fullmatch(str(n))) == (n <= MAX_ID)


async def test_the_document_states_the_payment_id_rule(anonymous: httpx.AsyncClient) -> None:
    document = (await anonymous.get("/openapi.json")).json()
    operation = document["paths"]["/api/v2/transactions/{id}/bankprov/payment-confirmation"]
    (parameter,) = operation["get"]["parameters"]
    assert parameter["name"] == "id"
    assert parameter["in"] == "path"
    assert parameter["schema"]["type"] == "string"
    assert parameter["schema"]["pattern"] == PAYMENT_ID_PATTERN
    assert {"400", "404"} <= operation["get"]["responses"].keys()


async def test_a_completed_payout_is_confirmed_by_the_provider(api: httpx.AsyncClient) -> None:
    user, budget, payee = await payout_setup(api, "500.00")
    payout = await pay(api, user, terms(user, budget, payee, 120.25, Reference="Invoice 9"))
    assert (await move_payout(api, payout["PayoutId"], "COMPLETED")).status_code == 200
    response = await confirmation(api, payout["TransactionId"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["TransactionId"] == payout["TransactionId"]
    assert re.fullmatch(r"[1-9][0-9]*", body["PaymentId"])
    assert body["Status"] == "COMPLETED"
    assert Decimal(str(body["Amount"])) == Decimal("120.25")
    assert body["Currency"] == "EUR"
    assert body["BeneficiaryName"] == "Acme GmbH"
    assert body["BeneficiaryAccountLast4"] == SEPA_IBAN[-4:]
    assert body["PaymentMethod"] == "SEPA.CREDITTRANSFER"
    assert body["ConfirmationReference"]
    assert body["ExecutedAt"]
    assert body["Provider"] == "bankprov"


async def test_the_provider_refusing_to_confirm_a_pending_payout_is_a_bad_request(
    api: httpx.AsyncClient,
) -> None:
    user, budget, payee = await payout_setup(api, "500.00")
    payout = await pay(api, user, terms(user, budget, payee, 30))
    response = await confirmation(api, payout["TransactionId"])
    assert response.status_code == 400
    assert response.json()["Code"] == "PAYMENT_CONFIRMATION_REJECTED"
    assert "PAYMENT_NOT_COMPLETED" in response.json()["Details"]


async def test_another_companys_payout_has_no_confirmation(
    tenant: Tenant, make_tenant: TenantFactory
) -> None:
    user, budget, payee = await payout_setup(tenant.client, "500.00")
    payout = await pay(tenant.client, user, terms(user, budget, payee, 30))
    await move_payout(tenant.client, payout["PayoutId"], "COMPLETED")
    other = await make_tenant("Other Ltd")
    response = await confirmation(other.client, payout["TransactionId"])
    assert response.status_code == 404
    assert response.json()["Code"] == "PAYMENT_NOT_FOUND"
