"""Payees: the required-fields form, creation with a verification challenge, verification with
attempt limits and expiry, list/get/delete, and the check payouts rely on."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.banking.payees import service
from finplat.banking.payees.models import Payee, PayeeStatus
from finplat.banking.payees.repository import expire_unconfirmed
from finplat.jobs import maintenance_once
from finplat.kit.clock import set_clock
from finplat.providers.banking.sandbox.models import SandboxBankprovPayee
from tests.banking.payees.steps import (
    SEPA_IBAN,
    confirm,
    create_payee,
    fps_body,
    payee_body,
    pending_payee,
    verified_payee,
)
from tests.banking.steps import banking_user
from tests.bankprov_onboarding.steps import onboarded_user
from tests.conftest import Tenant, TenantFactory
from tests.onboarding import create_user, set_fault

TURKISH_IBAN = "TR330006100519786457841326"  # valid, outside the SEPA zone
WRONG_TOKEN = "ZZZZZZZZ"


def later(minutes: int) -> None:
    moved = datetime.now(UTC) + timedelta(minutes=minutes)
    set_clock(lambda: moved)


async def form(api: httpx.AsyncClient, user_id: int, **params: str) -> httpx.Response:
    query: dict[str, str | int] = {"userId": user_id, "paymentType": "COMPANY", **params}
    return await api.get("/api/v2/banking/payees/required-fields", params=query)


async def get_payee(api: httpx.AsyncClient, user: dict[str, Any], payee_id: str) -> httpx.Response:
    return await api.get(f"/api/v2/banking/payees/{payee_id}", params={"userId": user["Id"]})


async def delete_payee(
    api: httpx.AsyncClient, user: dict[str, Any], payee_id: str
) -> httpx.Response:
    return await api.delete(f"/api/v2/banking/payees/{payee_id}", params={"userId": user["Id"]})


async def list_payees(api: httpx.AsyncClient, user: dict[str, Any]) -> httpx.Response:
    return await api.get("/api/v2/banking/payees", params={"userId": user["Id"]})


async def provider_payees(session: AsyncSession, company_id: int) -> list[SandboxBankprovPayee]:
    rows = await session.execute(
        select(SandboxBankprovPayee).where(SandboxBankprovPayee.company_id == company_id)
    )
    return list(rows.scalars())


async def stored(session: AsyncSession, payee_id: str) -> Payee:
    payee = (
        await session.execute(
            select(Payee).where(Payee.id == payee_id).execution_options(populate_existing=True)
        )
    ).scalar_one()
    return payee


def code(response: httpx.Response) -> str:
    return str(response.json()["Code"])


# --------------------------------------------------------------------------- required fields


async def test_sepa_form_asks_for_an_iban_and_an_optional_bic(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await form(api, user["Id"], paymentMethod="SEPA.CREDITTRANSFER", currency="EUR")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["Supported"] is True
    assert (body["PaymentType"], body["PaymentMethod"], body["Currency"]) == (
        "COMPANY",
        "SEPA.CREDITTRANSFER",
        "EUR",
    )
    fields = {f["Name"]: f for f in body["Fields"]}
    assert set(fields) == {"Name", "Comments", "Iban", "Bic", "BankName"}
    assert fields["Iban"]["Required"] is True
    assert fields["Iban"]["Pattern"] == "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"
    assert fields["Bic"]["Required"] is False
    assert fields["Name"]["MaxLength"] == 100


async def test_fps_form_asks_for_account_number_and_sort_code(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await form(api, user["Id"], paymentMethod="FPS", currency="GBP")
    fields = {f["Name"]: f for f in response.json()["Fields"]}
    assert fields["AccountNumber"]["Required"] is True
    assert fields["AccountNumber"]["Pattern"] == "^[0-9]{8}$"
    assert fields["SortCode"]["Required"] is True
    assert fields["SortCode"]["Pattern"] == "^[0-9]{6}$"
    assert "Iban" not in fields


async def test_swift_form_needs_a_bic_and_offers_iban_or_account_number(
    api: httpx.AsyncClient,
) -> None:
    user = await create_user(api)
    response = await form(api, user["Id"], paymentMethod="SWIFT", currency="USD")
    fields = {f["Name"]: f for f in response.json()["Fields"]}
    assert fields["Bic"]["Required"] is True
    assert fields["Iban"]["Required"] is False
    assert fields["AccountNumber"]["Required"] is False
    assert "BankCountry" in fields


async def test_a_method_that_does_not_carry_the_currency_is_unsupported_not_an_error(
    api: httpx.AsyncClient,
) -> None:
    user = await create_user(api)
    response = await form(api, user["Id"], paymentMethod="FPS", currency="EUR")
    assert response.status_code == 200
    assert response.json()["Supported"] is False
    assert response.json()["Fields"] == []


async def test_the_form_needs_no_banking_account_but_an_existing_user(
    api: httpx.AsyncClient,
) -> None:
    user = await onboarded_user(api)  # banking account not approved
    ok = await form(api, user["Id"], paymentMethod="SEPA.INSTANT", currency="EUR")
    assert ok.status_code == 200
    missing = await form(api, 987_654_321, paymentMethod="SEPA.INSTANT", currency="EUR")
    assert missing.status_code == 404


async def test_the_form_refuses_an_unknown_payment_method(api: httpx.AsyncClient) -> None:
    user = await create_user(api)
    response = await form(api, user["Id"], paymentMethod="CHEQUE", currency="EUR")
    assert response.status_code == 400
    assert code(response) == "VALIDATION_ERROR"


# ----------------------------------------------------------------------------------- create


async def test_creating_a_payee_answers_a_verification_challenge(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    before = datetime.now(UTC)
    response = await create_payee(api, user, payee_body())
    assert response.status_code == 202, response.text
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json()
    assert body["Success"] is True
    assert re.fullmatch(r"pye_[0-9a-f]{24}", body["PayeeId"])
    assert body["Status"] == "PENDING_VERIFICATION"
    assert re.fullmatch(r"[2-9A-HJ-NP-Z]{8}", body["VerificationToken"])
    assert body["RecipientName"] == "Acme GmbH"
    assert body["AccountNumberLast4"] == SEPA_IBAN[-4:]
    assert body["Message"]
    expires = datetime.fromisoformat(body["ExpiresAt"])
    assert timedelta(minutes=9) < expires - before <= timedelta(minutes=10, seconds=5)
    assert SEPA_IBAN not in response.text


async def test_an_iban_with_a_wrong_checksum_is_an_invalid_iban(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await create_payee(api, user, payee_body(Iban="DE89370400440532013001"))
    assert response.status_code == 400
    assert code(response) == "INVALID_IBAN"
    assert "Iban" in response.json()["ValidationErrors"]


async def test_a_bic_of_no_country_is_an_invalid_bic(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await create_payee(api, user, payee_body(Bic="COBAXXFF"))
    assert response.status_code == 400
    assert code(response) == "INVALID_BIC"


async def test_a_valid_bic_is_kept_with_the_payee(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    payee = await verified_payee(api, user, Bic="COBADEFFXXX", BankName="Commerzbank")
    assert payee["Bic"] == "COBADEFFXXX"
    assert payee["BankName"] == "Commerzbank"


async def test_sepa_refuses_an_iban_outside_the_sepa_zone(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await create_payee(api, user, payee_body(Iban=TURKISH_IBAN))
    assert response.status_code == 400
    assert code(response) == "IBAN_NOT_SEPA"


async def test_swift_takes_an_iban_outside_the_sepa_zone(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    body = payee_body(PaymentMethod="SWIFT", Currency="USD", Iban=TURKISH_IBAN, Bic="TGBATRIS")
    response = await create_payee(api, user, body)
    assert response.status_code == 202, response.text
    assert response.json()["AccountNumberLast4"] == "1326"


async def test_an_fps_payee_is_paid_by_account_number_and_sort_code(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant
) -> None:
    user = await banking_user(api)
    response = await create_payee(api, user, fps_body())
    assert response.status_code == 202, response.text
    challenge = response.json()
    assert challenge["AccountNumberLast4"] == "6819"
    verified = await confirm(api, user, challenge["PayeeId"], challenge["VerificationToken"])
    assert verified.status_code == 200, verified.text
    payee = verified.json()
    assert (payee["PaymentMethod"], payee["Currency"], payee["PaymentType"]) == (
        "FPS",
        "GBP",
        "INDIVIDUAL",
    )
    [at_provider] = await provider_payees(session, tenant.company_id)
    assert (at_provider.account_number, at_provider.sort_code) == ("31926819", "601613")


async def test_fps_without_a_sort_code_is_a_validation_error(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await create_payee(api, user, fps_body(SortCode=None))
    assert response.status_code == 400
    assert code(response) == "VALIDATION_ERROR"
    assert "SortCode" in response.json()["ValidationErrors"]


async def test_a_method_refuses_fields_it_does_not_use(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    response = await create_payee(api, user, payee_body(SortCode="601613"))
    assert response.status_code == 400
    assert "SortCode" in response.json()["ValidationErrors"]


async def test_a_currency_the_method_does_not_carry_is_a_validation_error(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    response = await create_payee(api, user, payee_body(Currency="GBP"))
    assert response.status_code == 400
    assert "Currency" in response.json()["ValidationErrors"]


async def test_swift_needs_exactly_one_of_iban_and_account_number(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    both = payee_body(
        PaymentMethod="SWIFT", Currency="USD", Bic="CHASUS33", AccountNumber="123456789"
    )
    neither = payee_body(PaymentMethod="SWIFT", Currency="USD", Bic="CHASUS33", Iban=None)
    for body in (both, neither):
        response = await create_payee(api, user, body)
        assert response.status_code == 400, response.text
        assert {"Iban", "AccountNumber"} <= set(response.json()["ValidationErrors"])
    by_number = payee_body(
        PaymentMethod="SWIFT", Currency="USD", Bic="CHASUS33", Iban=None, AccountNumber="123456789"
    )
    assert (await create_payee(api, user, by_number)).status_code == 202


async def test_a_payee_needs_an_active_banking_account(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    response = await create_payee(api, user, payee_body())
    assert response.status_code == 409
    assert code(response) == "BANKING_ACCOUNT_NOT_ACTIVE"


async def test_a_create_retried_with_the_same_key_replays_the_first_answer(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    first = await create_payee(api, user, payee_body(), **{"Idempotency-Key": "payee-1"})
    again = await create_payee(api, user, payee_body(), **{"Idempotency-Key": "payee-1"})
    assert first.status_code == again.status_code == 202
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    listed = (await list_payees(api, user)).json()["Items"]
    assert [p["PayeeId"] for p in listed] == [first.json()["PayeeId"]]


# ----------------------------------------------------------------------------------- verify


async def test_the_right_token_activates_the_payee_and_registers_it_at_the_provider(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant
) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    response = await confirm(api, user, challenge["PayeeId"], challenge["VerificationToken"])
    assert response.status_code == 200, response.text
    payee = response.json()
    assert payee["Status"] == "ACTIVE"
    assert payee["PayeeId"] == challenge["PayeeId"]
    assert payee["VerifiedAt"] is not None
    [at_provider] = await provider_payees(session, tenant.company_id)
    assert at_provider.iban == SEPA_IBAN
    assert at_provider.account_id == user["AccountId"]
    row = await stored(session, challenge["PayeeId"])
    assert row.provider_payee_id == at_provider.payee_id
    # Only the provider keeps the full account details now.
    assert row.pending_details is None
    assert row.token_hash is None


async def test_a_wrong_token_is_refused_and_counted(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    first = await confirm(api, user, challenge["PayeeId"], WRONG_TOKEN)
    second = await confirm(api, user, challenge["PayeeId"], WRONG_TOKEN)
    assert first.status_code == second.status_code == 403
    assert code(first) == "INVALID_VERIFICATION_TOKEN"
    assert "4 attempts left" in first.json()["Message"]
    assert "3 attempts left" in second.json()["Message"]
    right = await confirm(api, user, challenge["PayeeId"], challenge["VerificationToken"])
    assert right.json()["Status"] == "ACTIVE"


async def test_five_wrong_tokens_lock_the_payee(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant
) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    for _ in range(4):
        response = await confirm(api, user, challenge["PayeeId"], WRONG_TOKEN)
        assert response.status_code == 403
    fifth = await confirm(api, user, challenge["PayeeId"], WRONG_TOKEN)
    assert (fifth.status_code, code(fifth)) == (409, "PAYEE_VERIFICATION_LOCKED")
    right = await confirm(api, user, challenge["PayeeId"], challenge["VerificationToken"])
    assert right.status_code == 409
    assert code(right) == "PAYEE_VERIFICATION_LOCKED"
    payee = (await get_payee(api, user, challenge["PayeeId"])).json()
    assert payee["Status"] == "VERIFICATION_FAILED"
    assert (await stored(session, challenge["PayeeId"])).pending_details is None
    assert await provider_payees(session, tenant.company_id) == []


async def test_an_expired_token_cannot_confirm(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    later(minutes=11)
    response = await confirm(api, user, challenge["PayeeId"], challenge["VerificationToken"])
    assert response.status_code == 409
    assert code(response) == "VERIFICATION_TOKEN_EXPIRED"
    payee = (await get_payee(api, user, challenge["PayeeId"])).json()
    assert payee["Status"] == "EXPIRED"


async def test_a_token_confirms_only_once(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    token = challenge["VerificationToken"]
    assert (await confirm(api, user, challenge["PayeeId"], token)).status_code == 200
    again = await confirm(api, user, challenge["PayeeId"], token)
    assert again.status_code == 409
    assert code(again) == "PAYEE_ALREADY_VERIFIED"


async def test_a_token_of_another_payee_does_not_confirm(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    first = await pending_payee(api, user)
    second = await pending_payee(api, user)
    response = await confirm(api, user, first["PayeeId"], second["VerificationToken"])
    assert response.status_code == 403


async def test_a_registration_timeout_leaves_the_payee_pending_and_a_retry_completes_it(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant
) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    token = challenge["VerificationToken"]
    await set_fault(api, "bankprov", "register_payee", "timeout")
    lost = await confirm(api, user, challenge["PayeeId"], token)
    assert lost.status_code == 503
    assert code(lost) == "PROVIDER_TIMEOUT"
    pending = (await get_payee(api, user, challenge["PayeeId"])).json()
    assert pending["Status"] == "PENDING_VERIFICATION"
    later(minutes=11)  # the token was accepted in time: the retry may finish after expiry
    retry = await confirm(api, user, challenge["PayeeId"], token)
    assert retry.status_code == 200, retry.text
    assert retry.json()["Status"] == "ACTIVE"
    [at_provider] = await provider_payees(session, tenant.company_id)
    assert (await stored(session, challenge["PayeeId"])).provider_payee_id == at_provider.payee_id


async def test_deleting_after_a_lost_registration_removes_it_at_the_provider(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant
) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    await set_fault(api, "bankprov", "register_payee", "timeout")
    lost = await confirm(api, user, challenge["PayeeId"], challenge["VerificationToken"])
    assert lost.status_code == 503
    deleted = await delete_payee(api, user, challenge["PayeeId"])
    assert deleted.status_code == 200, deleted.text
    [at_provider] = await provider_payees(session, tenant.company_id)
    assert at_provider.status == "REMOVED"


# ------------------------------------------------------------------------ list, get, delete


async def test_payees_are_listed_newest_first(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    first = await pending_payee(api, user, Name="First")
    later(minutes=1)
    second = await verified_payee(api, user, Name="Second")
    response = await list_payees(api, user)
    assert response.status_code == 200
    items = response.json()["Items"]
    assert [p["PayeeId"] for p in items] == [second["PayeeId"], first["PayeeId"]]
    assert [p["Status"] for p in items] == ["ACTIVE", "PENDING_VERIFICATION"]
    assert response.json()["HasMore"] is False


async def test_a_payee_can_be_read_back(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    created = await verified_payee(api, user, Comments="Office rent")
    response = await get_payee(api, user, created["PayeeId"])
    assert response.status_code == 200
    payee = response.json()
    assert payee == created
    assert payee["Comments"] == "Office rent"
    assert payee["Provider"] == "bankprov"
    assert payee["AccountNumberLast4"] == SEPA_IBAN[-4:]


async def test_the_token_never_appears_in_reads(api: httpx.AsyncClient) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    token = challenge["VerificationToken"]
    read = await get_payee(api, user, challenge["PayeeId"])
    listed = await list_payees(api, user)
    for response in (read, listed):
        assert response.status_code == 200
        assert token not in response.text
        assert "VerificationToken" not in response.text
        assert SEPA_IBAN not in response.text


async def test_deleting_a_payee_removes_it_at_the_provider_and_from_lists(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant
) -> None:
    user = await banking_user(api)
    payee = await verified_payee(api, user)
    response = await delete_payee(api, user, payee["PayeeId"])
    assert response.status_code == 200
    assert response.json()["Status"] == "DELETED"
    assert (await get_payee(api, user, payee["PayeeId"])).status_code == 404
    assert (await list_payees(api, user)).json()["Items"] == []
    assert (await delete_payee(api, user, payee["PayeeId"])).status_code == 404
    [at_provider] = await provider_payees(session, tenant.company_id)
    assert at_provider.status == "REMOVED"


async def test_a_pending_payee_can_be_deleted_without_the_provider(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant
) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    response = await delete_payee(api, user, challenge["PayeeId"])
    assert response.json()["Status"] == "DELETED"
    gone = await confirm(api, user, challenge["PayeeId"], challenge["VerificationToken"])
    assert gone.status_code == 404
    assert await provider_payees(session, tenant.company_id) == []


async def test_a_removal_timeout_keeps_the_payee_and_a_retry_deletes_it(
    api: httpx.AsyncClient,
) -> None:
    user = await banking_user(api)
    payee = await verified_payee(api, user)
    await set_fault(api, "bankprov", "remove_payee", "timeout")
    lost = await delete_payee(api, user, payee["PayeeId"])
    assert lost.status_code == 503
    assert (await get_payee(api, user, payee["PayeeId"])).json()["Status"] == "ACTIVE"
    retry = await delete_payee(api, user, payee["PayeeId"])
    assert retry.status_code == 200
    assert retry.json()["Status"] == "DELETED"


async def test_another_users_payee_is_not_found(api: httpx.AsyncClient) -> None:
    owner = await banking_user(api)
    other = await banking_user(api)
    challenge = await pending_payee(api, owner)
    payee_id = challenge["PayeeId"]
    responses = [
        await get_payee(api, other, payee_id),
        await confirm(api, other, payee_id, challenge["VerificationToken"]),
        await delete_payee(api, other, payee_id),
    ]
    for response in responses:
        assert response.status_code == 404
        assert code(response) == "PAYEE_NOT_FOUND"
    assert (await list_payees(api, other)).json()["Items"] == []
    assert (await get_payee(api, owner, payee_id)).json()["Status"] == "PENDING_VERIFICATION"


async def test_another_companys_payee_is_not_found(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    owner = await banking_user(api)
    payee = await verified_payee(api, owner)
    other_company = (await make_tenant("Other Ltd")).client
    stranger = await banking_user(other_company)
    response = await get_payee(other_company, stranger, payee["PayeeId"])
    assert response.status_code == 404
    assert code(response) == "PAYEE_NOT_FOUND"
    deleted = await delete_payee(other_company, stranger, payee["PayeeId"])
    assert deleted.status_code == 404
    assert (await get_payee(api, owner, payee["PayeeId"])).json()["Status"] == "ACTIVE"


# ------------------------------------------------------------------------------ for payouts


async def test_active_payee_returns_a_verified_payee(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant
) -> None:
    user = await banking_user(api)
    payee = await verified_payee(api, user)
    found = await service.active_payee(
        session, company_id=tenant.company_id, user_id=user["Id"], payee_id=payee["PayeeId"]
    )
    assert found.status == PayeeStatus.ACTIVE
    assert found.provider_payee_id is not None
    assert (found.name, found.currency, found.payment_method) == (
        "Acme GmbH",
        "EUR",
        "SEPA.CREDITTRANSFER",
    )


async def test_active_payee_refuses_a_payee_not_verified(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant
) -> None:
    user = await banking_user(api)
    challenge = await pending_payee(api, user)
    with pytest.raises(service.PayeeNotVerified):
        await service.active_payee(
            session, company_id=tenant.company_id, user_id=user["Id"], payee_id=challenge["PayeeId"]
        )


async def test_active_payee_refuses_unknown_deleted_and_other_users_payees(
    api: httpx.AsyncClient, session: AsyncSession, tenant: Tenant, make_tenant: TenantFactory
) -> None:
    user = await banking_user(api)
    other = await banking_user(api)
    kept = await verified_payee(api, user)
    deleted = await verified_payee(api, user)
    await delete_payee(api, user, deleted["PayeeId"])
    elsewhere = await make_tenant("Elsewhere Ltd")
    cases = [
        (tenant.company_id, user["Id"], "pye_" + "0" * 24),
        (tenant.company_id, user["Id"], deleted["PayeeId"]),
        (tenant.company_id, other["Id"], kept["PayeeId"]),
        (elsewhere.company_id, user["Id"], kept["PayeeId"]),
    ]
    for company_id, user_id, payee_id in cases:
        with pytest.raises(service.PayeeNotFound):
            await service.active_payee(
                session, company_id=company_id, user_id=user_id, payee_id=payee_id
            )


# ------------------------------------------------------------------------------ maintenance


async def test_unconfirmed_payees_expire_and_lose_their_account_details(
    api: httpx.AsyncClient, session: AsyncSession
) -> None:
    user = await banking_user(api)
    fresh = await pending_payee(api, user)
    confirmed = await verified_payee(api, user)
    later(minutes=11)
    stale = await pending_payee(api, user)  # created "now": not yet expired
    count = await expire_unconfirmed(session, now=datetime.now(UTC) + timedelta(minutes=12))
    await session.commit()
    assert count == 1
    expired = await stored(session, fresh["PayeeId"])
    assert expired.status == PayeeStatus.EXPIRED
    assert expired.pending_details is None
    assert expired.token_hash is None
    assert (await stored(session, confirmed["PayeeId"])).status == PayeeStatus.ACTIVE
    assert (await stored(session, stale["PayeeId"])).status == PayeeStatus.PENDING_VERIFICATION
    total = await session.scalar(select(func.count()).select_from(Payee))
    assert total == 3


async def test_maintenance_expires_unconfirmed_payees(
    api: httpx.AsyncClient, app: FastAPI, session: AsyncSession
) -> None:
    user = await banking_user(api)
    pending = await pending_payee(api, user)
    set_clock(lambda: datetime.now(UTC) + timedelta(minutes=11))
    done = await maintenance_once(app.state.session_factory)
    assert done["expired_payees"] == 1
    assert (await stored(session, pending["PayeeId"])).status == PayeeStatus.EXPIRED
