"""Personal onboarding with the banking provider: preconditions, the proof of address, and a
provider timeout."""

from __future__ import annotations

from datetime import date, timedelta

import httpx
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.bankprov_onboarding.models import BankprovApplication
from finplat.bankprov_onboarding.service import earliest_proof_of_address_date
from finplat.kit.clock import today
from finplat.providers.banking_onboarding.sandbox.adapter import application_count
from tests.bankprov_onboarding.steps import (
    bankprov_status,
    eligible_user,
    onboarded_user,
    onboarding_fields,
    proof,
    submit,
)
from tests.conftest import Tenant
from tests.documents import samples
from tests.onboarding import approved_user, create_user, set_fault


async def stored_application(
    session_factory: async_sessionmaker[AsyncSession], user_id: int
) -> BankprovApplication:
    async with session_factory() as session:
        return (
            await session.execute(
                select(BankprovApplication).where(BankprovApplication.user_id == user_id)
            )
        ).scalar_one()


async def test_an_eligible_user_is_accepted_pending_with_the_provider_ids(
    api: httpx.AsyncClient,
) -> None:
    user = await eligible_user(api)
    response = await submit(api, user["Id"])
    assert response.status_code == 202, response.text
    body = response.json()
    assert body["Success"] is True
    assert body["CorrelationId"].startswith("bp_cor_")
    assert body["AccountId"].startswith("bp_acc_")
    assert await bankprov_status(api, user["Id"]) == "PENDING"


async def test_the_application_keeps_answers_and_file_facts_but_not_the_file(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await eligible_user(api)
    png = samples.png()
    assert (await submit(api, user["Id"], files=proof(png, "bill.png"))).status_code == 202
    stored = await stored_application(session_factory, user["Id"])
    assert stored.requested_features == ["PAYMENTS", "CARDS"]
    assert (stored.proof_of_address_type, stored.proof_of_address_size) == ("PNG", len(png))
    assert stored.atm_withdrawals_required is True
    assert stored.number_of_cards_required == 1


async def test_a_second_submission_is_refused(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    response = await submit(api, user["Id"])
    assert response.status_code == 409
    assert response.json()["Code"] == "BANKPROV_ONBOARDING_ALREADY_SUBMITTED"


async def test_a_business_user_is_sent_to_kyb(api: httpx.AsyncClient) -> None:
    user = await approved_user(api, AccountType="business")
    response = await submit(api, user["Id"])
    assert (response.status_code, response.json()["Code"]) == (409, "BUSINESS_USER_NOT_ALLOWED")


async def test_base_kyc_must_be_approved(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await submit(api, user["Id"])
    assert (response.status_code, response.json()["Code"]) == (409, "KYC_NOT_APPROVED")


async def test_the_tier_must_include_the_banking_provider(api: httpx.AsyncClient) -> None:
    user = await approved_user(api)  # the default tier: card provider only
    response = await submit(api, user["Id"])
    assert (response.status_code, response.json()["Code"]) == (409, "TIER_EXCLUDES_BANKPROV")


async def test_an_unknown_user_is_404(api: httpx.AsyncClient) -> None:
    response = await submit(api, 987654321)
    assert (response.status_code, response.json()["Code"]) == (404, "USER_NOT_FOUND")


async def test_a_renamed_text_file_is_not_a_proof_of_address(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    response = await submit(api, user["Id"], files=proof(b"hello, I am text", "bill.pdf"))
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_PROOF_OF_ADDRESS"
    assert "ProofOfAddress" in response.json()["ValidationErrors"]


async def test_a_missing_proof_of_address_is_a_validation_error(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    response = await api.post(
        "/api/v2/banking/bankprov-onboarding",
        params={"userId": user["Id"]},
        files={"MainPurpose": (None, "x")},
    )
    assert response.status_code == 400
    assert response.json()["ValidationErrors"]["ProofOfAddress"] == ["Field required."]


async def test_a_proof_of_address_from_three_months_ago_is_accepted(
    api: httpx.AsyncClient,
) -> None:
    user = await eligible_user(api)
    oldest = earliest_proof_of_address_date(today()).isoformat()
    assert (await submit(api, user["Id"], ProofOfAddressDate=oldest)).status_code == 202


async def test_a_proof_of_address_older_than_three_months_is_refused(
    api: httpx.AsyncClient,
) -> None:
    user = await eligible_user(api)
    too_old = (earliest_proof_of_address_date(today()) - timedelta(days=1)).isoformat()
    response = await submit(api, user["Id"], ProofOfAddressDate=too_old)
    assert (response.status_code, response.json()["Code"]) == (400, "PROOF_OF_ADDRESS_TOO_OLD")


async def test_a_proof_of_address_dated_in_the_future_is_refused(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    tomorrow = (today() + timedelta(days=1)).isoformat()
    response = await submit(api, user["Id"], ProofOfAddressDate=tomorrow)
    assert response.status_code == 400
    assert response.json()["Code"] == "PROOF_OF_ADDRESS_DATE_IN_FUTURE"


def _pdf_date(day: date) -> str:
    return f"D:{day:%Y%m%d}120000Z"


async def test_the_spec_form_without_a_proof_of_address_date_is_accepted(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await eligible_user(api)
    response = await submit(api, user["Id"], ProofOfAddressDate=...)
    assert response.status_code == 202, response.text
    stored = await stored_application(session_factory, user["Id"])
    assert stored.proof_of_address_date is None


async def test_without_a_stated_date_a_file_written_too_long_ago_is_refused(
    api: httpx.AsyncClient,
) -> None:
    user = await eligible_user(api)
    written = earliest_proof_of_address_date(today()) - timedelta(days=1)
    response = await submit(
        api,
        user["Id"],
        ProofOfAddressDate=...,
        files=proof(samples.pdf_written(_pdf_date(written))),
    )
    assert (response.status_code, response.json()["Code"]) == (400, "PROOF_OF_ADDRESS_TOO_OLD")
    assert list(response.json()["ValidationErrors"]) == ["ProofOfAddress"]


async def test_without_a_stated_date_a_photo_taken_too_long_ago_is_refused(
    api: httpx.AsyncClient,
) -> None:
    user = await eligible_user(api)
    taken = earliest_proof_of_address_date(today()) - timedelta(days=40)
    photo = samples.jpeg_taken(f"{taken:%Y:%m:%d} 10:00:00")
    response = await submit(api, user["Id"], ProofOfAddressDate=..., files=proof(photo, "bill.jpg"))
    assert (response.status_code, response.json()["Code"]) == (400, "PROOF_OF_ADDRESS_TOO_OLD")


async def test_without_a_stated_date_a_recently_written_file_is_accepted(
    api: httpx.AsyncClient,
) -> None:
    user = await eligible_user(api)
    old_then_edited = samples.pdf_written(
        _pdf_date(today() - timedelta(days=400)), _pdf_date(today() - timedelta(days=5))
    )
    response = await submit(api, user["Id"], ProofOfAddressDate=..., files=proof(old_then_edited))
    assert response.status_code == 202, response.text


async def test_a_stated_date_decides_over_the_files_own_date(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    written = earliest_proof_of_address_date(today()) - timedelta(days=30)
    response = await submit(api, user["Id"], files=proof(samples.pdf_written(_pdf_date(written))))
    assert response.status_code == 202, response.text


def test_three_months_back_from_a_long_month_end_is_the_shorter_month_end() -> None:
    assert earliest_proof_of_address_date(date(2026, 5, 31)) == date(2026, 2, 28)
    assert earliest_proof_of_address_date(date(2026, 1, 15)) == date(2025, 10, 15)


async def test_form_booleans_are_exactly_true_or_false(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    response = await submit(api, user["Id"], AtmWithdrawalsRequired="yes")
    assert response.status_code == 400
    assert "AtmWithdrawalsRequired" in response.json()["ValidationErrors"]


async def test_unknown_form_fields_are_refused(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    response = await submit(api, user["Id"], Nickname="x")
    assert response.json()["ValidationErrors"] == {"Nickname": ["Unknown field."]}


async def test_form_part_names_match_in_any_letter_case(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    response = await api.post(
        "/api/v2/banking/bankprov-onboarding",
        params={"userId": user["Id"]},
        data={name.lower(): value for name, value in onboarding_fields().items()},
        files=[("PROOFOFADDRESS", ("statement.pdf", samples.pdf(), "application/pdf"))],
    )
    assert response.status_code == 202, response.text


async def test_a_form_field_sent_twice_in_different_cases_is_duplicate_field(
    api: httpx.AsyncClient,
) -> None:
    user = await eligible_user(api)
    response = await submit(api, user["Id"], mainpurpose="Saving")
    assert (response.status_code, response.json()["Code"]) == (400, "DUPLICATE_FIELD")
    assert response.json()["ValidationErrors"] == {"MainPurpose": ["Send this field once."]}


async def test_a_repeated_field_takes_its_values_in_any_case(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await eligible_user(api)
    response = await submit(
        api, user["Id"], RequestedFeatures=["PAYMENTS"], requestedfeatures=["CARDS"]
    )
    assert response.status_code == 202, response.text
    stored = await stored_application(session_factory, user["Id"])
    assert stored.requested_features == ["PAYMENTS", "CARDS"]


async def test_a_json_body_is_unsupported(api: httpx.AsyncClient) -> None:
    response = await api.post(
        "/api/v2/banking/bankprov-onboarding", params={"userId": 1}, json={"MainPurpose": "x"}
    )
    assert response.status_code == 415


async def test_a_provider_timeout_is_a_503_and_leaves_no_application(
    api: httpx.AsyncClient, tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await eligible_user(api)
    before = await bankprov_status(api, user["Id"])
    await set_fault(api, "bankprov", "submit_personal_onboarding", "timeout")
    response = await submit(api, user["Id"])
    assert (response.status_code, response.json()["Code"]) == (503, "PROVIDER_TIMEOUT")
    async with session_factory() as session:
        count = (
            await session.execute(
                select(func.count()).where(BankprovApplication.user_id == user["Id"])
            )
        ).scalar_one()
    assert count == 0
    assert await bankprov_status(api, user["Id"]) == before


async def test_retrying_after_a_timeout_completes_with_one_provider_application(
    api: httpx.AsyncClient, tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await eligible_user(api)
    await set_fault(api, "bankprov", "submit_personal_onboarding", "timeout")
    assert (await submit(api, user["Id"])).status_code == 503
    retried = await submit(api, user["Id"])
    assert retried.status_code == 202, retried.text
    assert await application_count(session_factory, company_id=tenant.company_id) == 1
