"""GET /api/v2/transactions/{id}: the spec's fields, tenancy, and the status refreshed from
the provider before the answer."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.providers.errors import ProviderUnavailable
from finplat.providers.registry import Providers
from finplat.transactions import service as transactions
from finplat.transactions.kinds import TransactionStatus, TransactionType
from finplat.transactions.models import Transaction
from tests.banking.steps import banking_user, credit, default_budget
from tests.conftest import Tenant, TenantFactory
from tests.onboarding import create_user
from tests.transactions.steps import pending_transaction, refresher_for, transaction


async def test_detail_reports_user_fee_and_parsed_metadata(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    budget = await default_budget(api, user["Id"])
    created = await credit(api, user["Id"], budget["BudgetId"], "250.75", "EUR")
    response = await transaction(api, created["Id"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["Id"] == created["Id"]
    assert body["UserId"] == user["Id"]
    assert body["Type"] == "INCOMING_PAYMENT"
    assert body["Status"] == "COMPLETED"
    assert body["Provider"] == "bankprov"
    assert body["Amount"] == 250.75
    assert body["Currency"] == "EUR"
    assert body["BudgetId"] == budget["BudgetId"]
    assert body["FeeAmount"] is None
    assert body["FeeCurrency"] is None
    assert body["RelatedCardTransactionId"] is None
    assert isinstance(body["Metadata"], dict)
    assert body["Metadata"]["scheme"] == "SEPA"
    assert body["Metadata"]["senderName"] == "Ada Lovelace"
    assert body["CompletedAt"] is not None


async def test_another_companys_transaction_is_not_found(
    tenant: Tenant, make_tenant: TenantFactory
) -> None:
    user = await banking_user(tenant.client)
    budget = await default_budget(tenant.client, user["Id"])
    created = await credit(tenant.client, user["Id"], budget["BudgetId"], 10, "EUR")
    other = await make_tenant("Other Ltd")
    response = await transaction(other.client, created["Id"])
    assert response.status_code == 404
    assert response.json()["Code"] == "TRANSACTION_NOT_FOUND"


async def test_with_user_id_the_transaction_must_be_that_users(
    tenant: Tenant, session: AsyncSession
) -> None:
    owner = await create_user(tenant.client)
    someone_else = await create_user(tenant.client)
    pending = await pending_transaction(session, company_id=tenant.company_id, user_id=owner["Id"])
    mismatch = await transaction(tenant.client, pending.id, userId=someone_else["Id"])
    assert mismatch.status_code == 404
    assert mismatch.json()["Code"] == "TRANSACTION_NOT_FOUND"
    own = await transaction(tenant.client, pending.id, userId=owner["Id"])
    assert own.status_code == 200
    assert own.json()["UserId"] == owner["Id"]


async def test_reading_a_pending_transaction_applies_the_providers_decision(
    tenant: Tenant, session: AsyncSession
) -> None:
    user = await create_user(tenant.client)
    pending = await pending_transaction(
        session,
        company_id=tenant.company_id,
        user_id=user["Id"],
        type_=TransactionType.PAYOUT,
        fee_minor=50,
        fee_currency="EUR",
    )
    asked: list[int] = []

    async def provider_says_completed(
        session: AsyncSession, providers: Providers, tx: Transaction
    ) -> None:
        asked.append(tx.id)
        await transactions.settle(
            session, tx, status=TransactionStatus.COMPLETED, metadata={"paymentId": "42"}
        )

    with refresher_for(TransactionType.PAYOUT, provider_says_completed):
        first = await transaction(tenant.client, pending.id)
        again = await transaction(tenant.client, pending.id)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["Status"] == "COMPLETED"
    assert body["CompletedAt"] is not None
    assert body["FeeAmount"] == 0.5
    assert body["FeeCurrency"] == "EUR"
    assert body["Metadata"] == {"paymentId": "42"}
    assert again.json()["Status"] == "COMPLETED"
    assert asked == [pending.id]  # a final transaction is not asked about again


async def test_a_provider_failure_during_the_refresh_answers_the_stored_state(
    tenant: Tenant, session: AsyncSession
) -> None:
    user = await create_user(tenant.client)
    pending = await pending_transaction(session, company_id=tenant.company_id, user_id=user["Id"])

    async def provider_down_midway(
        session: AsyncSession, providers: Providers, tx: Transaction
    ) -> None:
        await transactions.settle(session, tx, status=TransactionStatus.FAILED, reason="half")
        raise ProviderUnavailable()

    with refresher_for(TransactionType.MASTER_TRANSFER, provider_down_midway):
        response = await transaction(tenant.client, pending.id)
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "PENDING"
    assert response.json()["StatusReason"] is None
    assert (await transaction(tenant.client, pending.id)).json()["Status"] == "PENDING"


async def test_an_id_beyond_the_largest_is_invalid(api: httpx.AsyncClient) -> None:
    response = await transaction(api, 2**53)
    assert response.status_code == 400
    assert "Id" in response.json()["ValidationErrors"]


async def test_an_unknown_id_is_not_found(api: httpx.AsyncClient) -> None:
    response = await transaction(api, 987_654_321)
    assert response.status_code == 404
    assert response.json()["Code"] == "TRANSACTION_NOT_FOUND"
