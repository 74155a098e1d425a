"""Verification documents and information requests, and the decisions that lead to them."""

from __future__ import annotations

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.providers.banking_onboarding.sandbox.adapter import (
    RESUBMISSION_QUESTIONS,
    stored_documents,
)
from tests.bankprov_onboarding.steps import (
    bankprov_status,
    documents,
    eligible_user,
    onboarded_user,
    upload,
)
from tests.documents import samples
from tests.onboarding import decide


async def _events(api: httpx.AsyncClient) -> list[dict]:  # type: ignore[type-arg]
    response = await api.get("/api/v2/events", params={"type": "account.status_updated"})
    return list(response.json()["Items"])


async def test_the_whole_personal_flow_through_the_sandbox(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    user_id = user["Id"]

    report = await decide(api, user_id, "RESUBMISSION", provider="bankprov")
    assert next(p for p in report["Providers"] if p["Provider"] == "bankprov")["Status"] == (
        "pending_documents"
    )
    assert any(
        e["Data"]["status"] == "pending_documents" and e["Data"]["accountId"] == user["AccountId"]
        for e in await _events(api)
    )

    uploaded = await upload(api, user_id, documents(samples.pdf(), samples.png()))
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["Status"] == "PENDING"

    outstanding = (await api.get(f"/api/v2/users/{user_id}/kyc/bankprov/information")).json()
    assert outstanding["DocumentsRequired"] is False
    assert [r["Question"] for r in outstanding["Requests"]] == list(RESUBMISSION_QUESTIONS)
    answered = await api.post(
        f"/api/v2/users/{user_id}/kyc/bankprov/information",
        json={
            "Answers": [
                {"RequestId": r["RequestId"], "Answer": "Engineer at Analytical Engines Ltd"}
                for r in outstanding["Requests"]
            ]
        },
    )
    assert answered.status_code == 200, answered.text
    assert (answered.json()["Requests"], answered.json()["Status"]) == ([], "PENDING")

    await decide(api, user_id, "APPROVED", provider="bankprov")
    assert await bankprov_status(api, user_id) == "approved"
    assert [e["Data"]["status"] for e in await _events(api)][:3] == [
        "approved",
        "PENDING",
        "pending_documents",
    ]


async def test_a_rejection_makes_the_status_rejected(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    await decide(api, user["Id"], "REJECTED", provider="bankprov")
    assert await bankprov_status(api, user["Id"]) == "rejected"


async def test_documents_after_a_rejection_are_refused(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    await decide(api, user["Id"], "REJECTED", provider="bankprov")
    response = await upload(api, user["Id"], documents(samples.pdf()))
    assert (response.status_code, response.json()["Code"]) == (409, "BANKPROV_ONBOARDING_REJECTED")


async def test_a_decision_needs_an_onboarding_application(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    response = await api.post(
        f"/api/v2/sandbox/users/{user['Id']}/kyc/complete",
        json={"Outcome": "APPROVED", "Provider": "bankprov"},
    )
    assert (response.status_code, response.json()["Code"]) == (
        409,
        "BANKPROV_ONBOARDING_NOT_SUBMITTED",
    )


async def test_documents_need_a_submitted_onboarding(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    response = await upload(api, user["Id"], documents(samples.pdf()))
    assert (response.status_code, response.json()["Code"]) == (
        409,
        "BANKPROV_ONBOARDING_NOT_SUBMITTED",
    )


async def test_no_file_at_all_is_refused(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    response = await api.post(
        f"/api/v2/users/{user['Id']}/kyc/bankprov/documents",
        files={"Other": (None, "x")},
    )
    assert response.status_code == 400


async def test_an_empty_multipart_body_is_refused_as_documents_missing(
    api: httpx.AsyncClient,
) -> None:
    user = await onboarded_user(api)
    response = await api.post(
        f"/api/v2/users/{user['Id']}/kyc/bankprov/documents",
        content=b"--b--\r\n",
        headers={"content-type": "multipart/form-data; boundary=b"},
    )
    assert (response.status_code, response.json()["Code"]) == (400, "DOCUMENTS_MISSING")


async def test_one_legacy_file_is_accepted(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    response = await upload(api, user["Id"], documents(samples.jpeg(), field="File"))
    assert response.status_code == 200, response.text
    assert (response.json()["FileCount"], response.json()["PageCount"]) == (1, 1)


async def test_files_and_the_legacy_file_together_are_refused(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    files = documents(samples.pdf()) + documents(samples.png(), field="File")
    response = await upload(api, user["Id"], files)
    assert (response.status_code, response.json()["Code"]) == (400, "DOCUMENT_FIELDS_COMBINED")


async def test_ten_files_are_accepted(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    response = await upload(
        api, user["Id"], documents(*[samples.png(20 + i, 10) for i in range(10)])
    )
    assert response.status_code == 200, response.text
    assert (response.json()["FileCount"], response.json()["PageCount"]) == (10, 10)


async def test_eleven_files_are_refused(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    response = await upload(api, user["Id"], documents(*[samples.png() for _ in range(11)]))
    assert (response.status_code, response.json()["Code"]) == (400, "TOO_MANY_DOCUMENTS")


async def test_a_renamed_text_file_is_refused_with_its_position(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    response = await upload(api, user["Id"], documents(samples.pdf(), b"plain text, named .pdf"))
    assert (response.status_code, response.json()["Code"]) == (400, "INVALID_DOCUMENT")
    assert list(response.json()["ValidationErrors"]) == ["Files.1"]


async def test_a_truncated_png_is_refused(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    data = samples.png(300, 300)
    response = await upload(api, user["Id"], documents(data[: len(data) // 2]))
    assert (response.status_code, response.json()["Code"]) == (400, "INVALID_DOCUMENT")


async def test_the_provider_gets_one_pdf_with_the_pages_in_request_order(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await onboarded_user(api)
    files = documents(samples.jpeg(111, 20), samples.pdf(222, 223), samples.png(333, 20))
    response = await upload(api, user["Id"], files)
    assert response.json()["PageCount"] == 4
    [sent] = await stored_documents(session_factory, account_id=user["AccountId"])
    assert samples.page_widths(sent) == [111, 222, 223, 333]


async def test_the_same_files_again_return_the_same_document(
    api: httpx.AsyncClient, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    user = await onboarded_user(api)
    first = await upload(api, user["Id"], documents(samples.pdf()))
    again = await upload(api, user["Id"], documents(samples.pdf()))
    assert first.json()["DocumentId"] == again.json()["DocumentId"]
    assert len(await stored_documents(session_factory, account_id=user["AccountId"])) == 1


async def test_information_needs_a_submitted_onboarding(api: httpx.AsyncClient) -> None:
    user = await eligible_user(api)
    response = await api.get(f"/api/v2/users/{user['Id']}/kyc/bankprov/information")
    assert response.status_code == 409


async def test_an_unknown_information_request_is_404_and_nothing_is_answered(
    api: httpx.AsyncClient,
) -> None:
    user = await onboarded_user(api)
    await decide(api, user["Id"], "RESUBMISSION", provider="bankprov")
    path = f"/api/v2/users/{user['Id']}/kyc/bankprov/information"
    first = (await api.get(path)).json()["Requests"][0]["RequestId"]
    response = await api.post(
        path,
        json={
            "Answers": [
                {"RequestId": first, "Answer": "An answer"},
                {"RequestId": "bp_irq_nope", "Answer": "Another"},
            ]
        },
    )
    assert (response.status_code, response.json()["Code"]) == (404, "INFORMATION_REQUEST_NOT_FOUND")
    assert len((await api.get(path)).json()["Requests"]) == len(RESUBMISSION_QUESTIONS)


async def test_answering_everything_while_documents_are_missing_keeps_pending_documents(
    api: httpx.AsyncClient,
) -> None:
    user = await onboarded_user(api)
    await decide(api, user["Id"], "RESUBMISSION", provider="bankprov")
    path = f"/api/v2/users/{user['Id']}/kyc/bankprov/information"
    requests = (await api.get(path)).json()["Requests"]
    answers = [{"RequestId": r["RequestId"], "Answer": "Done"} for r in requests]
    response = await api.post(path, json={"Answers": answers})
    assert (response.json()["Status"], response.json()["DocumentsRequired"]) == (
        "pending_documents",
        True,
    )


async def test_a_request_answered_differently_is_a_conflict(api: httpx.AsyncClient) -> None:
    user = await onboarded_user(api)
    await decide(api, user["Id"], "RESUBMISSION", provider="bankprov")
    path = f"/api/v2/users/{user['Id']}/kyc/bankprov/information"
    request_id = (await api.get(path)).json()["Requests"][0]["RequestId"]
    await api.post(path, json={"Answers": [{"RequestId": request_id, "Answer": "One"}]})
    again = await api.post(path, json={"Answers": [{"RequestId": request_id, "Answer": "One"}]})
    other = await api.post(path, json={"Answers": [{"RequestId": request_id, "Answer": "Two"}]})
    assert again.status_code == 200
    assert (other.status_code, other.json()["Code"]) == (
        409,
        "INFORMATION_REQUEST_ALREADY_ANSWERED",
    )
