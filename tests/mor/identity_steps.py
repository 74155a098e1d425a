"""Steps of the MOR simple users' tests: a user, its token, a bearer client."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from finplat.mor.access import PREFIX

USERS = f"{PREFIX}/users"
TOKEN = f"{PREFIX}/auth/token"
REVOKE = f"{PREFIX}/auth/revoke"
ME = f"{PREFIX}/me"
PASSWORD = "correct-horse-battery-9"


def user_body(**overrides: Any) -> dict[str, Any]:
    return {
        "Email": f"user-{uuid.uuid4().hex[:10]}@example.com",
        "FirstName": "Ada",
        "LastName": "Lovelace",
        "Password": PASSWORD,
        **overrides,
    }


async def simple_user(api: httpx.AsyncClient, **overrides: Any) -> dict[str, Any]:
    response = await api.post(USERS, json=user_body(**overrides))
    assert response.status_code == 200, response.text
    return dict(response.json())


async def sign_in(api: httpx.AsyncClient, email: str, password: str = PASSWORD) -> str:
    response = await api.post(TOKEN, json={"Email": email, "Password": password})
    assert response.status_code == 200, response.text
    return str(response.json()["AccessToken"])


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
