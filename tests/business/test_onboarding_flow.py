"""The whole business onboarding through the sandbox: compliance, people, documents, submit,
the provider's review, and what the partner sees of each step."""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.config import Settings
from tests.business.steps import (
    APPLICATION,
    COMPLIANCE,
    PEOPLE,
    business_user,
    compliance_payload,
    create_application,
    deliver_callbacks,
    events_of,
    ok,
    person_payload,
    ready_to_submit,
    upload,
)
from tests.conftest import Tenant
from tests.documents import samples
from tests.onboarding import decide, provider_status

SUBMIT = f"{APPLICATION}/submit"
APPLICATION_DOCUMENTS = f"{APPLICATION}/documents"


def without_nulls(value: Any) -> Any:
    """What was sent, without the optional fields the response lists as null."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def person_documents(person_id: int) -> str:
    return f"{PEOPLE}/{person_id}/documents"


async def application_status(api: httpx.AsyncClient, user_id: int) -> str:
    return str((await ok(await api.get(APPLICATION, params={"userId": user_id})))["status"])


async def test_business_onboarding_from_draft_to_an_open_account(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    api = tenant.client
    user_id = await business_user(api)
    application = await create_application(api, user_id)
    assert application["status"] == "draft"

    await ok(await api.post(COMPLIANCE, params={"userId": user_id}, json=compliance_payload()))
    person = await ok(
        await api.post(PEOPLE, params={"userId": user_id}, json=person_payload()), 201
    )
    await deliver_callbacks(session_factory, settings, tenant.company_id)
    [created] = await events_of(api, "person.created")
    assert (created["Domain"], created["Provider"]) == ("person", "bankprov")
    assert created["Data"]["personId"] == person["Id"]
    assert created["Data"]["email"] == "charles@example.com"

    await ok(await upload(api, APPLICATION_DOCUMENTS, user_id, "CERTIFICATE_OF_INCORPORATION"), 201)
    await ok(
        await upload(api, person_documents(person["Id"]), user_id, "PASSPORT", samples.jpeg()),
        201,
    )

    submitted = await ok(await api.post(SUBMIT, params={"userId": user_id}))
    assert submitted["status"] == "submitted"

    report = await decide(api, user_id, "RESUBMISSION", provider="bankprov")
    assert provider_status(report, "bankprov")["Status"] == "pending_documents"
    assert await application_status(api, user_id) == "more_information_required"

    await ok(
        await upload(api, APPLICATION_DOCUMENTS, user_id, "PROOF_OF_ADDRESS", samples.png()), 201
    )
    resubmitted = await ok(await api.post(SUBMIT, params={"userId": user_id}))
    assert resubmitted["status"] == "submitted"

    report = await decide(api, user_id, "APPROVED", provider="bankprov")
    bankprov = provider_status(report, "bankprov")
    assert bankprov["Status"] == "approved"
    final = await ok(await api.get(APPLICATION, params={"userId": user_id}))
    assert final["status"] == "approved"
    assert final["accountId"] is not None
    assert final["accountId"] == bankprov["AccountId"]
    updates = await events_of(api, "account.status_updated")
    assert [u["Data"]["status"] for u in updates if u["Data"]["userId"] == user_id][-3:] == [
        "pending_documents",
        "PENDING",
        "approved",
    ]
    assert updates[-1]["Data"]["accountId"] == final["accountId"]


async def test_rejection_closes_the_application(api: httpx.AsyncClient) -> None:
    user_id = await ready_to_submit(api)
    await ok(await api.post(SUBMIT, params={"userId": user_id}))
    report = await decide(api, user_id, "REJECTED", provider="bankprov")
    assert provider_status(report, "bankprov")["Status"] == "rejected"
    final = await ok(await api.get(APPLICATION, params={"userId": user_id}))
    assert (final["status"], final["accountId"]) == ("rejected", None)
    again = await api.post(SUBMIT, params={"userId": user_id})
    assert (again.status_code, again.json()["Code"]) == (409, "BUSINESS_APPLICATION_NOT_EDITABLE")


async def test_the_provider_review_moves_a_submitted_application_in_review(
    tenant: Tenant, session_factory: async_sessionmaker[AsyncSession], settings: Settings
) -> None:
    user_id = await ready_to_submit(tenant.client)
    await ok(await tenant.client.post(SUBMIT, params={"userId": user_id}))
    await deliver_callbacks(session_factory, settings, tenant.company_id)
    assert await application_status(tenant.client, user_id) == "in_review"


async def test_submitting_needs_a_person_and_the_compliance_requirements(
    api: httpx.AsyncClient,
) -> None:
    user_id = await business_user(api)
    await create_application(api, user_id)
    response = await api.post(SUBMIT, params={"userId": user_id})
    assert (response.status_code, response.json()["Code"]) == (
        409,
        "BUSINESS_APPLICATION_INCOMPLETE",
    )
    assert set(response.json()["ValidationErrors"]) == {
        "AssociatedPeople",
        "ComplianceRequirements",
    }


async def test_a_submitted_application_cannot_change(api: httpx.AsyncClient) -> None:
    user_id = await ready_to_submit(api)
    await ok(await api.post(SUBMIT, params={"userId": user_id}))
    response = await api.post(
        PEOPLE, params={"userId": user_id}, json=person_payload(Email="ada@example.com")
    )
    assert (response.status_code, response.json()["Code"]) == (
        409,
        "BUSINESS_APPLICATION_NOT_EDITABLE",
    )


async def test_only_a_submitted_application_can_be_decided(api: httpx.AsyncClient) -> None:
    user_id = await ready_to_submit(api)
    response = await api.post(
        f"/api/v2/sandbox/users/{user_id}/kyc/complete",
        json={"Provider": "bankprov", "Outcome": "APPROVED"},
    )
    assert (response.status_code, response.json()["Code"]) == (
        409,
        "BUSINESS_APPLICATION_NOT_SUBMITTED",
    )


async def test_steps_before_the_application_need_it(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    response = await api.post(COMPLIANCE, params={"userId": user_id}, json={})
    assert (response.status_code, response.json()["Code"]) == (
        409,
        "BUSINESS_APPLICATION_REQUIRED",
    )


async def test_compliance_requirements_are_stored_as_sent(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    application = await create_application(api, user_id)
    sent = compliance_payload()
    body = await ok(await api.post(COMPLIANCE, params={"userId": user_id}, json=sent))
    assert body["ApplicationId"] == application["id"]
    for field in ("Country", "TaxId", "PaymentCountries"):
        assert body[field] == sent[field], field
    for field in ("Addresses", "Compliance"):
        assert without_nulls(body[field]) == sent[field], field


async def test_compliance_requirements_may_be_empty(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    await create_application(api, user_id)
    body = await ok(await api.post(COMPLIANCE, params={"userId": user_id}, json={}))
    assert body["Addresses"] is None


async def test_people_are_listed_oldest_first(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    await create_application(api, user_id)
    for email, role in (("a@example.com", "DIRECTOR"), ("b@example.com", "UBO")):
        await ok(
            await api.post(
                PEOPLE, params={"userId": user_id}, json=person_payload(Email=email, Role=role)
            ),
            201,
        )
    page = await ok(await api.get(PEOPLE, params={"userId": user_id}))
    assert [(p["Email"], p["Role"]) for p in page["Items"]] == [
        ("a@example.com", "DIRECTOR"),
        ("b@example.com", "UBO"),
    ]
    assert page["Items"][0]["OwnershipPercentage"] == 25.5


async def test_a_person_email_is_unique_per_application(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    await create_application(api, user_id)
    await ok(await api.post(PEOPLE, params={"userId": user_id}, json=person_payload()), 201)
    response = await api.post(PEOPLE, params={"userId": user_id}, json=person_payload())
    assert (response.status_code, response.json()["Code"]) == (409, "ASSOCIATED_PERSON_EXISTS")


async def test_a_document_that_is_not_pdf_jpeg_or_png_is_refused(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    await create_application(api, user_id)
    response = await upload(
        api, APPLICATION_DOCUMENTS, user_id, "OTHER", b"%PDF-not really", "x.pdf"
    )
    assert (response.status_code, response.json()["Code"]) == (400, "INVALID_DOCUMENT")
    assert "File" in response.json()["ValidationErrors"]


async def test_the_same_document_sent_twice_is_one_document(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    await create_application(api, user_id)
    first = await ok(await upload(api, APPLICATION_DOCUMENTS, user_id, "OTHER"), 201)
    second = await ok(await upload(api, APPLICATION_DOCUMENTS, user_id, "OTHER"), 201)
    assert first["Id"] == second["Id"]
    assert first["ContentType"] == "application/pdf"


async def test_a_document_for_an_unknown_person_is_404(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    await create_application(api, user_id)
    response = await upload(api, person_documents(987654321), user_id, "PASSPORT")
    assert (response.status_code, response.json()["Code"]) == (404, "ASSOCIATED_PERSON_NOT_FOUND")


async def test_an_unknown_document_type_is_refused(api: httpx.AsyncClient) -> None:
    user_id = await business_user(api)
    await create_application(api, user_id)
    response = await upload(api, APPLICATION_DOCUMENTS, user_id, "PASSPORTS")
    assert response.status_code == 400
    assert "DocumentType" in response.json()["ValidationErrors"]


async def test_person_questions_are_answered_through_the_banking_information_endpoint(
    api: httpx.AsyncClient,
) -> None:
    user_id = await ready_to_submit(api)
    people = await ok(await api.get(PEOPLE, params={"userId": user_id}))
    person_id = people["Items"][0]["Id"]
    await ok(await api.post(SUBMIT, params={"userId": user_id}))
    await decide(api, user_id, "RESUBMISSION", provider="bankprov")

    information = f"/api/v2/users/{user_id}/kyc/bankprov/information"
    outstanding = await ok(await api.get(information))
    assert outstanding["Status"] == "pending_documents"
    about_person = [r for r in outstanding["Requests"] if r["PersonId"] == person_id]
    assert about_person, outstanding
    answers = [
        {"RequestId": r["RequestId"], "Answer": "Director since 2019."} for r in about_person
    ]
    answered = await ok(await api.post(information, json={"Answers": answers}))
    assert [r for r in answered["Requests"] if r["PersonId"] == person_id] == []
