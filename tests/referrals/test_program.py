"""The company's one referral programme, configured over the admin routes."""

from __future__ import annotations

import httpx

from tests.conftest import Tenant, TenantFactory
from tests.referrals.steps import BRONZE, GOLD, PROGRAM, configure, program, terms


async def test_no_programme_reads_exists_false(api: httpx.AsyncClient) -> None:
    read = await program(api)
    assert read["Exists"] is False
    assert read["Id"] is None
    assert read["Levels"] == []


async def test_configured_programme_reads_back_its_terms(api: httpx.AsyncClient) -> None:
    await configure(api, VoucherClaimDays=45, CommissionEligibilityMonths=6)
    read = await program(api)
    assert read["Exists"] is True
    assert read["Status"] == "ACTIVE"
    assert read["Provider"] == "finplat"
    assert read["LevelBasis"] == "QUALIFIED_REFERRALS"
    assert read["DeliveryMode"] == "CARD_CREDIT"
    assert read["PayoutCurrency"] == "USD"
    assert read["VoucherClaimDays"] == 45
    assert read["CommissionEligibilityMonths"] == 6
    assert read["LevelLookbackMonths"] == 12
    assert [level["Code"] for level in read["Levels"]] == ["BRONZE", "GOLD"]
    assert read["Levels"][1]["QualificationReward"] == 20
    assert read["Levels"][0]["CommissionBps"] == 100


async def test_every_change_bumps_the_revision(api: httpx.AsyncClient) -> None:
    first = await configure(api)
    second = await configure(api, HoldDays=7)
    assert (first["Revision"], second["Revision"]) == (1, 2)
    assert second["Id"] == first["Id"]  # one programme per company


async def test_a_stale_expected_revision_is_409(api: httpx.AsyncClient) -> None:
    await configure(api)
    await configure(api, HoldDays=3)
    response = await api.put(PROGRAM, json=terms(ExpectedRevision=1))
    assert response.status_code == 409
    assert response.json()["Code"] == "STALE_PROGRAM_REVISION"
    assert (await program(api))["HoldDays"] == 3


async def test_the_current_expected_revision_is_taken(api: httpx.AsyncClient) -> None:
    await configure(api)
    response = await api.put(PROGRAM, json=terms(ExpectedRevision=1, HoldDays=2))
    assert response.status_code == 200, response.text
    assert response.json()["Revision"] == 2


async def test_a_replayed_put_with_its_key_does_not_bump_again(api: httpx.AsyncClient) -> None:
    headers = {"Idempotency-Key": "program-1"}
    first = await api.put(PROGRAM, json=terms(), headers=headers)
    again = await api.put(PROGRAM, json=terms(), headers=headers)
    assert first.json()["Revision"] == again.json()["Revision"] == 1
    assert (await program(api))["Revision"] == 1


async def test_the_first_level_must_start_at_zero(api: httpx.AsyncClient) -> None:
    response = await api.put(PROGRAM, json=terms(Levels=[{**BRONZE, "Threshold": 1}]))
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_REFERRAL_PROGRAM"
    assert (await program(api))["Exists"] is False


async def test_thresholds_must_increase(api: httpx.AsyncClient) -> None:
    response = await api.put(PROGRAM, json=terms(Levels=[BRONZE, {**GOLD, "Threshold": 0}]))
    assert response.status_code == 400
    assert response.json()["Code"] == "INVALID_REFERRAL_PROGRAM"


async def test_a_friend_count_threshold_is_a_whole_number(api: httpx.AsyncClient) -> None:
    response = await api.put(PROGRAM, json=terms(Levels=[BRONZE, {**GOLD, "Threshold": 1.5}]))
    assert response.status_code == 400


async def test_a_reward_with_more_decimals_than_the_currency_is_400(
    api: httpx.AsyncClient,
) -> None:
    response = await api.put(PROGRAM, json=terms(Levels=[{**BRONZE, "WelcomeReward": "1.001"}]))
    assert response.status_code == 400


async def test_bps_above_10000_is_400(api: httpx.AsyncClient) -> None:
    response = await api.put(PROGRAM, json=terms(Levels=[{**BRONZE, "CommissionBps": 10001}]))
    assert response.status_code == 400


async def test_an_unknown_delivery_mode_is_400(api: httpx.AsyncClient) -> None:
    response = await api.put(PROGRAM, json=terms(DeliveryMode="CASH"))
    assert response.status_code == 400


async def test_the_payout_currency_is_fixed_once_set(api: httpx.AsyncClient) -> None:
    await configure(api)
    response = await api.put(PROGRAM, json=terms(PayoutCurrency="EUR"))
    assert (response.status_code, response.json()["Code"]) == (409, "PAYOUT_CURRENCY_FIXED")
    assert (await program(api))["PayoutCurrency"] == "USD"


async def test_fields_bind_case_insensitively(api: httpx.AsyncClient) -> None:
    body = {k.lower(): v for k, v in terms().items()}
    response = await api.put(PROGRAM, json=body)
    assert response.status_code == 200, response.text


async def test_another_companys_programme_is_not_seen(
    api: httpx.AsyncClient, make_tenant: TenantFactory
) -> None:
    await configure(api)
    other = await make_tenant("Other Ltd")
    assert (await program(other.client))["Exists"] is False
    response = await api.get(PROGRAM, params={"companyId": other.company_id})
    assert response.status_code == 404


async def test_an_operator_reads_a_companys_programme(
    api: httpx.AsyncClient, operator: httpx.AsyncClient, tenant: Tenant
) -> None:
    made = await configure(api)
    company_id = tenant.company_id
    response = await operator.get(PROGRAM, params={"companyId": company_id})
    assert response.status_code == 200, response.text
    assert response.json()["Id"] == made["Id"]
