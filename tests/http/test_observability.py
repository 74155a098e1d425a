"""Request ids, structured access logs without secrets or personal data, and /healthz."""

from __future__ import annotations

import json

import httpx
import structlog
from structlog.testing import capture_logs

from tests.conftest import Tenant
from tests.factories import user_payload


async def test_request_id_is_generated_and_echoed(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/tiers")
    assert response.headers["x-request-id"].startswith("req_")


async def test_incoming_request_id_is_echoed(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/tiers", headers={"X-Request-Id": "partner-trace-42"})
    assert response.headers["x-request-id"] == "partner-trace-42"


async def test_unsafe_incoming_request_id_is_replaced(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/tiers", headers={"X-Request-Id": "bad id\twith spaces"})
    assert response.headers["x-request-id"].startswith("req_")


async def test_request_id_is_on_error_responses(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.get("/api/v2/users", headers={"X-Request-Id": "trace-401"})
    assert response.status_code == 401
    assert response.headers["x-request-id"] == "trace-401"


async def test_access_log_has_request_id_company_route_status_and_latency(tenant: Tenant) -> None:
    with capture_logs() as logs:
        await tenant.client.get("/api/v2/users/77", headers={"X-Request-Id": "trace-log"})
    line = next(entry for entry in logs if entry["event"] == "request")
    assert line["request_id"] == "trace-log"
    assert line["company_id"] == tenant.company_id
    assert line["route"] == "/api/v2/users/{userId}"
    assert line["status"] == 404
    assert line["latency_ms"] >= 0


async def test_logs_never_hold_api_key_or_personal_data(tenant: Tenant) -> None:
    payload = user_payload(Email="private.person@example.com", Phone="+14155552671")
    with capture_logs() as logs:
        await tenant.client.post("/api/v2/users", json=payload)
        await tenant.client.post("/api/v2/users", json=payload)  # conflict path
        await tenant.client.post("/api/v2/users", json={**payload, "Email": "bad"})
    rendered = json.dumps(logs, default=str)
    assert tenant.api_key not in rendered
    for secret in ("private.person@example.com", "+14155552671", payload["LastName"]):
        assert secret not in rendered


async def test_logs_are_rendered_as_json(capsys) -> None:  # type: ignore[no-untyped-def]
    from finplat.config import Settings
    from finplat.http.observability import configure_logging

    configure_logging(Settings(log_format="json"))
    structlog.get_logger("t").info("hello", request_id="r1")
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert json.loads(line)["request_id"] == "r1"


async def test_healthz_needs_no_auth_and_reports_ok(anonymous: httpx.AsyncClient) -> None:
    response = await anonymous.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"Status": "ok"}


async def test_healthz_is_503_when_the_database_is_unreachable(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from finplat.app import create_app
    from finplat.config import Settings

    folder = tmp_path / "db"
    app = create_app(Settings(database_url=f"sqlite+aiosqlite:///{folder}/x.db"))
    folder.rmdir()
    folder.write_text("a file where the database folder should be")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t"
    ) as client:
        response = await client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["Code"] == "SERVICE_UNAVAILABLE"
