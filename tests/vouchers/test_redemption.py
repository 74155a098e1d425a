"""Redemption: start with the voucher code, verify the emailed code, the card is credited."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.jobs import maintenance_once
from finplat.kit.clock import set_clock, utcnow
from finplat.ledger import service as ledger
from finplat.ledger.service import CompanyAccount
from finplat.providers.errors import ProviderUnavailable
from tests.cards.funding.steps import active_card, card_balance
from tests.conftest import Tenant
from tests.onboarding import create_user, set_fault
from tests.vouchers.steps import (
    REDEMPTIONS,
    fund_vouchers,
    sent_code,
    start,
    started,
    verify,
    voucher,
    wrong,
)

REDEMPTION_FIELDS = {
    "Id",
    "VoucherId",
    "VoucherName",
    "Amount",
    "Currency",
    "Status",
    "TransactionReference",
    "ErrorCode",
    "CreatedAt",
    "CompletedAt",
}


@pytest.fixture
async def card(api: httpx.AsyncClient) -> dict[str, Any]:
    card = await active_card(api, master=0)
    await fund_vouchers(api)
    return card


async def _vouchers_available(session: AsyncSession, company_id: int) -> int:
    account = await ledger.company_account(
        session, company_id=company_id, kind=CompanyAccount.VOUCHERS, currency="USD"
    )
    return (await ledger.balance(session, company_id=company_id, account_id=account.id)).available


async def _listed(api: httpx.AsyncClient, voucher_id: str) -> dict[str, Any]:
    items = (await api.get("/api/v2/vouchers")).json()["Items"]
    return dict(next(item for item in items if item["Id"] == voucher_id))


async def test_a_verified_redemption_credits_the_card_from_voucher_funding(
    api: httpx.AsyncClient, tenant: Tenant, card: dict[str, Any], session: AsyncSession
) -> None:
    issued = await voucher(api, Value=25)
    redemption = await started(api, issued["PlaintextCode"], card)
    assert redemption["Status"] == "PENDING_VERIFICATION"
    assert redemption["TransactionReference"] is None
    assert (await _listed(api, issued["Id"]))["ReservedUses"] == 1
    response = await verify(api, redemption["Id"], await sent_code(api, redemption["Id"]))
    assert response.status_code == 200, response.text
    done = response.json()
    assert set(done) >= REDEMPTION_FIELDS
    assert done["Status"] == "COMPLETED"
    assert done["Amount"] == 25
    assert done["TransactionReference"]
    assert done["ErrorCode"] is None
    assert done["CompletedAt"]
    assert await card_balance(api, card) == Decimal("25.00")
    assert await _vouchers_available(session, tenant.company_id) == 100_000 - 2_500
    listed = await _listed(api, issued["Id"])
    assert (listed["SuccessfulUses"], listed["ReservedUses"]) == (1, 0)
    assert listed["RedeemedValue"] == 25


async def test_the_one_time_code_is_never_in_the_redemption_responses(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api)
    response = await start(api, issued["PlaintextCode"], card)
    code = await sent_code(api, response.json()["Id"])
    assert code not in response.text
    assert issued["PlaintextCode"] not in response.text
    done = await verify(api, response.json()["Id"], code)
    assert code not in done.text


async def test_a_wrong_code_is_403_and_the_fifth_locks_the_redemption(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api)
    redemption = await started(api, issued["PlaintextCode"], card)
    code = await sent_code(api, redemption["Id"])
    for _ in range(4):
        response = await verify(api, redemption["Id"], wrong(code))
        assert response.status_code == 403
        assert response.json()["Code"] == "INVALID_VERIFICATION_CODE"
    locked = await verify(api, redemption["Id"], wrong(code))
    assert locked.status_code == 409
    assert locked.json()["Code"] == "REDEMPTION_LOCKED"
    after = await verify(api, redemption["Id"], code)
    assert after.json()["Status"] == "FAILED"
    assert after.json()["ErrorCode"] == "VERIFICATION_LOCKED"
    assert await card_balance(api, card) == 0
    assert (await _listed(api, issued["Id"]))["ReservedUses"] == 0


async def test_a_code_verified_after_its_ttl_expires_the_redemption(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api)
    redemption = await started(api, issued["PlaintextCode"], card)
    code = await sent_code(api, redemption["Id"])
    later = utcnow()
    set_clock(lambda: later.replace(year=later.year + 1))
    response = await verify(api, redemption["Id"], code)
    assert response.status_code == 409
    assert response.json()["Code"] == "VERIFICATION_EXPIRED"
    got = (await api.get(f"{REDEMPTIONS}/{redemption['Id']}")).json()
    assert got["Status"] == "EXPIRED"
    assert (await _listed(api, issued["Id"]))["ReservedUses"] == 0


async def test_an_expired_reservation_frees_its_use_for_the_next_start(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api, MaximumTotalUses=1)
    await started(api, issued["PlaintextCode"], card)
    refused = await start(api, issued["PlaintextCode"], card)
    assert refused.status_code == 409
    assert refused.json()["Code"] == "VOUCHER_USE_LIMIT_REACHED"
    later = utcnow() + timedelta(hours=1)
    set_clock(lambda: later)
    again = await start(api, issued["PlaintextCode"], card)
    assert again.status_code == 201, again.text


async def test_insufficient_voucher_funding_is_409_and_changes_nothing(
    api: httpx.AsyncClient,
) -> None:
    card = await active_card(api, master=10_000)  # master money does not pay vouchers
    issued = await voucher(api, Value=25)
    redemption = await started(api, issued["PlaintextCode"], card)
    code = await sent_code(api, redemption["Id"])
    response = await verify(api, redemption["Id"], code)
    assert response.status_code == 409
    assert response.json()["Code"] == "VOUCHER_FUNDING_INSUFFICIENT"
    assert code not in response.text
    got = (await api.get(f"{REDEMPTIONS}/{redemption['Id']}")).json()
    assert got["Status"] == "PENDING_VERIFICATION"
    await fund_vouchers(api, 25)
    retried = await verify(api, redemption["Id"], code)
    assert retried.json()["Status"] == "COMPLETED"


async def test_a_voucher_without_email_2fa_completes_when_it_starts(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api, RequiresEmail2Fa=False, Value=10)
    response = await start(api, issued["PlaintextCode"], card)
    assert response.status_code == 201, response.text
    assert response.json()["Status"] == "COMPLETED"
    assert await card_balance(api, card) == 10
    reveal = await api.get(f"/api/v2/sandbox/vouchers/redemptions/{response.json()['Id']}/code")
    assert reveal.status_code == 404


async def test_the_per_user_limit_holds(api: httpx.AsyncClient, card: dict[str, Any]) -> None:
    issued = await voucher(api, RequiresEmail2Fa=False, PerUserLimit=1, Value=1)
    assert (await start(api, issued["PlaintextCode"], card)).status_code == 201
    second = await start(api, issued["PlaintextCode"], card)
    assert second.status_code == 409
    assert second.json()["Code"] == "VOUCHER_PER_USER_LIMIT_REACHED"


async def test_the_aggregate_value_cap_holds(api: httpx.AsyncClient, card: dict[str, Any]) -> None:
    issued = await voucher(api, RequiresEmail2Fa=False, Value=10, MaximumAggregateValue=25)
    assert (await start(api, issued["PlaintextCode"], card)).json()["Status"] == "COMPLETED"
    assert (await start(api, issued["PlaintextCode"], card)).json()["Status"] == "COMPLETED"
    third = await start(api, issued["PlaintextCode"], card)
    assert third.status_code == 409
    assert third.json()["Code"] in ("VOUCHER_VALUE_CAP_REACHED", "VOUCHER_EXHAUSTED")
    assert (await _listed(api, issued["Id"]))["Status"] == "EXHAUSTED"


async def test_an_unknown_code_is_404_and_never_echoed(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    made = "VCH-0000-0000-0000-0000-0000"
    response = await start(api, made, card)
    assert response.status_code == 404
    assert response.json()["Code"] == "VOUCHER_NOT_FOUND"
    assert "0000-0000" not in response.text


async def test_another_company_s_voucher_code_is_unknown(
    api: httpx.AsyncClient, card: dict[str, Any], make_tenant: Any
) -> None:
    other = await make_tenant("Other")
    theirs = await voucher(other.client)
    response = await start(api, theirs["PlaintextCode"], card)
    assert response.status_code == 404
    assert response.json()["Code"] == "VOUCHER_NOT_FOUND"


async def test_an_expired_voucher_cannot_start(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api, ValidFrom="2020-01-01T00:00:00Z", ValidUntil="2021-01-01T00:00:00Z")
    response = await start(api, issued["PlaintextCode"], card)
    assert response.status_code == 409
    assert response.json()["Code"] == "VOUCHER_EXPIRED"


async def test_a_voucher_in_another_currency_than_the_card_is_409(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api, Currency="EUR")
    response = await start(api, issued["PlaintextCode"], card)
    assert response.status_code == 409
    assert response.json()["Code"] == "VOUCHER_CURRENCY_MISMATCH"


async def test_vouchers_switched_off_refuse_new_redemptions(
    api: httpx.AsyncClient, card: dict[str, Any], operator: httpx.AsyncClient
) -> None:
    issued = await voucher(api)
    await operator.put("/api/v2/admin/vouchers/settings/global", json={"Enabled": False})
    response = await start(api, issued["PlaintextCode"], card)
    assert response.status_code == 409
    assert response.json()["Code"] == "VOUCHERS_DISABLED"


async def test_shutdown_stop_new_refuses_starts_but_lets_started_ones_finish(
    api: httpx.AsyncClient, card: dict[str, Any], operator: httpx.AsyncClient
) -> None:
    issued = await voucher(api, MaximumTotalUses=None)
    redemption = await started(api, issued["PlaintextCode"], card)
    await operator.put("/api/v2/admin/vouchers/settings/global", json={"ShutdownMode": "STOP_NEW"})
    refused = await start(api, issued["PlaintextCode"], card)
    assert refused.status_code == 409
    assert refused.json()["Code"] == "VOUCHERS_SHUT_DOWN"
    done = await verify(api, redemption["Id"], await sent_code(api, redemption["Id"]))
    assert done.json()["Status"] == "COMPLETED"


async def test_shutdown_stop_all_fails_waiting_redemptions_at_once(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api)
    redemption = await started(api, issued["PlaintextCode"], card)
    code = await sent_code(api, redemption["Id"])
    await api.put("/api/v2/admin/vouchers/settings/company", json={"ShutdownMode": "STOP_ALL"})
    response = await verify(api, redemption["Id"], code)
    assert response.status_code == 409
    assert response.json()["Code"] == "VOUCHERS_SHUT_DOWN"
    got = (await api.get(f"{REDEMPTIONS}/{redemption['Id']}")).json()
    assert (got["Status"], got["ErrorCode"]) == ("FAILED", "VOUCHERS_SHUT_DOWN")
    assert await card_balance(api, card) == 0


async def test_a_card_the_provider_refuses_fails_the_redemption_and_gives_the_use_back(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api, MaximumTotalUses=1)
    redemption = await started(api, issued["PlaintextCode"], card)
    await set_fault(api, "cardprov", "load", "error", HttpStatus=409)
    response = await verify(api, redemption["Id"], await sent_code(api, redemption["Id"]))
    assert response.status_code == 200, response.text
    assert response.json()["Status"] == "FAILED"
    assert response.json()["ErrorCode"]
    listed = await _listed(api, issued["Id"])
    assert (listed["SuccessfulUses"], listed["ReservedUses"], listed["Status"]) == (0, 0, "ACTIVE")
    assert await card_balance(api, card) == 0


async def test_a_timed_out_credit_stays_processing_until_settled(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api)
    redemption = await started(api, issued["PlaintextCode"], card)
    code = await sent_code(api, redemption["Id"])
    await set_fault(api, "cardprov", "load", "timeout")
    response = await verify(api, redemption["Id"], code)
    assert response.status_code == 503
    got = (await api.get(f"{REDEMPTIONS}/{redemption['Id']}")).json()
    assert got["Status"] == "COMPLETED"
    assert await card_balance(api, card) == 25


async def test_redemption_events_are_recorded(api: httpx.AsyncClient, card: dict[str, Any]) -> None:
    issued = await voucher(api, RequiresEmail2Fa=False)
    await start(api, issued["PlaintextCode"], card)
    events = (await api.get("/api/v2/events", params={"pageSize": 100})).json()["Items"]
    types = {e["Type"] for e in events}
    assert {"voucher.redemption.started", "voucher.redemption.completed"} <= types


async def test_verify_with_another_user_id_is_404(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api)
    redemption = await started(api, issued["PlaintextCode"], card)
    someone_else = await create_user(api)
    response = await api.post(
        f"{REDEMPTIONS}/{redemption['Id']}/verify",
        params={"userId": someone_else["Id"]},
        json={"Code": "000000"},
    )
    assert response.status_code == 404
    assert response.json()["Code"] == "REDEMPTION_NOT_FOUND"


async def test_an_approval_voucher_waits_for_the_company_then_credits(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api, RequiresWhitelabelApproval=True, Value=12)
    redemption = await started(api, issued["PlaintextCode"], card)
    early = await api.post(f"{REDEMPTIONS}/{redemption['Id']}/approve")
    assert early.status_code == 409
    assert early.json()["Code"] == "REDEMPTION_NOT_AWAITING_APPROVAL"
    verified = await verify(api, redemption["Id"], await sent_code(api, redemption["Id"]))
    assert verified.json()["Status"] == "PENDING_APPROVAL"
    assert await card_balance(api, card) == 0
    approved = await api.post(f"{REDEMPTIONS}/{redemption['Id']}/approve")
    assert approved.status_code == 200, approved.text
    assert approved.json()["Status"] == "COMPLETED"
    assert await card_balance(api, card) == 12


async def test_a_rejected_redemption_releases_its_reservation(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api, RequiresWhitelabelApproval=True, MaximumTotalUses=1)
    redemption = await started(api, issued["PlaintextCode"], card)
    await verify(api, redemption["Id"], await sent_code(api, redemption["Id"]))
    rejected = await api.post(f"{REDEMPTIONS}/{redemption['Id']}/reject")
    assert rejected.status_code == 200
    assert (rejected.json()["Status"], rejected.json()["ErrorCode"]) == (
        "REJECTED",
        "REJECTED_BY_COMPANY",
    )
    assert (await _listed(api, issued["Id"]))["ReservedUses"] == 0
    again = await api.post(f"{REDEMPTIONS}/{redemption['Id']}/approve")
    assert again.json()["Status"] == "REJECTED"
    assert await card_balance(api, card) == 0


async def test_a_retried_start_resumes_its_redemption_with_a_fresh_code(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api, MaximumTotalUses=1)
    first = await start(api, issued["PlaintextCode"], card, key="start-1")
    assert first.status_code == 201
    again = await start(api, issued["PlaintextCode"], card, key="start-1")
    assert again.json()["Id"] == first.json()["Id"]
    assert (await _listed(api, issued["Id"]))["ReservedUses"] == 1
    done = await verify(api, first.json()["Id"], await sent_code(api, first.json()["Id"]))
    assert done.json()["Status"] == "COMPLETED"


async def test_a_start_whose_email_failed_resumes_on_retry_without_reserving_again(
    api: httpx.AsyncClient, card: dict[str, Any], app: Any
) -> None:
    issued = await voucher(api, MaximumTotalUses=1)
    mailer = app.state.providers.mailer
    sent = mailer.send_code

    async def down(**_: Any) -> None:
        raise ProviderUnavailable()

    mailer.send_code = down
    try:
        failed = await start(api, issued["PlaintextCode"], card, key="start-2")
        assert failed.status_code == 503
    finally:
        mailer.send_code = sent
    retried = await start(api, issued["PlaintextCode"], card, key="start-2")
    assert retried.status_code == 201, retried.text
    assert (await _listed(api, issued["Id"]))["ReservedUses"] == 1
    code = await sent_code(api, retried.json()["Id"])
    assert (await verify(api, retried.json()["Id"], code)).json()["Status"] == "COMPLETED"


async def test_a_retried_start_without_2fa_credits_once(
    api: httpx.AsyncClient, card: dict[str, Any]
) -> None:
    issued = await voucher(api, RequiresEmail2Fa=False, Value=4)
    first = await start(api, issued["PlaintextCode"], card, key="start-3")
    again = await start(api, issued["PlaintextCode"], card, key="start-3")
    assert first.json()["Id"] == again.json()["Id"]
    assert again.json()["Status"] == "COMPLETED"
    assert await card_balance(api, card) == 4


async def test_maintenance_expires_unverified_redemptions_and_releases_their_uses(
    api: httpx.AsyncClient, card: dict[str, Any], session_factory: Any
) -> None:
    issued = await voucher(api, MaximumTotalUses=1)
    redemption = await started(api, issued["PlaintextCode"], card)
    assert (await maintenance_once(session_factory))["expired_voucher_redemptions"] == 0
    later = utcnow() + timedelta(hours=1)
    set_clock(lambda: later)
    assert (await maintenance_once(session_factory))["expired_voucher_redemptions"] == 1
    got = (await api.get(f"{REDEMPTIONS}/{redemption['Id']}")).json()
    assert (got["Status"], got["ErrorCode"]) == ("EXPIRED", "VERIFICATION_EXPIRED")
    assert (await _listed(api, issued["Id"]))["ReservedUses"] == 0
