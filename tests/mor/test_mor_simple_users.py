"""MOR simple users (`POST /api/v2/mor/public/users`): creation, the password policy and how
the password is kept."""

from __future__ import annotations

import re
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from finplat.mor.identity.models import MorCredential
from tests.conftest import Tenant
from tests.mor.identity_steps import PASSWORD, USERS, simple_user, user_body


async def test_a_simple_user_is_a_user_of_the_mor_company_without_its_password(
    mor_tenant: Tenant,
) -> None:
    response = await mor_tenant.client.post(USERS, json=user_body(Email="grace@example.com"))
    assert response.status_code == 200, response.text
    created = response.json()
    assert created["Email"] == "grace@example.com"
    assert created["Status"] == "ACTIVE"
    assert created["KycStatus"] == "NOT_STARTED"
    assert "Password" not in created
    assert PASSWORD not in response.text
    user = await mor_tenant.client.get(f"/api/v2/users/{created['Id']}")
    assert user.status_code == 200
    assert user.json()["AccountType"] == "personal"


async def test_each_missing_field_of_a_simple_user_is_named(mor_tenant: Tenant) -> None:
    response = await mor_tenant.client.post(USERS, json={})
    assert response.status_code == 400
    body = response.json()
    assert body["Code"] == "VALIDATION_ERROR"
    assert set(body["ValidationErrors"]) == {"Email", "FirstName", "LastName", "Password"}


async def test_a_simple_users_email_is_unique_in_the_company_whatever_its_case(
    mor_tenant: Tenant,
) -> None:
    await simple_user(mor_tenant.client, Email="dup@example.com")
    again = await mor_tenant.client.post(USERS, json=user_body(Email="DUP@example.com"))
    assert again.status_code == 409
    assert again.json()["Code"] == "MOR_USER_EMAIL_EXISTS"


async def test_the_same_email_may_sign_up_with_two_merchants(
    mor_tenant: Tenant, make_tenant: Any
) -> None:
    other = await make_tenant("Other MOR", mor=True)
    await simple_user(mor_tenant.client, Email="both@example.com")
    await simple_user(other.client, Email="both@example.com")


async def _refused(api: httpx.AsyncClient, password: str, email: str | None = None) -> str:
    body = user_body(Password=password, **({"Email": email} if email else {}))
    response = await api.post(USERS, json=body)
    assert response.status_code == 400, response.text
    assert response.json()["Code"] == "VALIDATION_ERROR"
    assert list(response.json()["ValidationErrors"]) == ["Password"]
    assert password not in response.text
    return str(response.json()["ValidationErrors"]["Password"][0])


async def test_a_password_shorter_than_12_characters_is_refused_without_being_quoted(
    mor_tenant: Tenant,
) -> None:
    await _refused(mor_tenant.client, "Sh0rt-pass")


async def test_a_password_that_is_the_email_is_refused(mor_tenant: Tenant) -> None:
    problem = await _refused(mor_tenant.client, "Mail.Me.9@example.com", "mail.me.9@example.com")
    assert "email" in problem


async def test_a_password_without_a_letter_and_something_else_is_refused(
    mor_tenant: Tenant,
) -> None:
    problem = await _refused(mor_tenant.client, "onlylettershere")
    assert "not a letter" in problem
    await _refused(mor_tenant.client, "123456789012345")
    await _refused(mor_tenant.client, "aaaaaaaaaaaaaaa")


async def test_the_documents_password_pattern_is_the_policys(app: FastAPI) -> None:
    schema = app.openapi()["components"]["schemas"]["MorSimpleUserRequest"]
    pattern = re.compile(schema["properties"]["Password"]["pattern"])
    for password in ("correct-horse-battery-9", "123456789012a", "a" * 11 + "!"):
        assert pattern.match(password), password
    for password in ("onlylettershere", "123456789012345", "!!!!!!!!!!!!"):
        assert not pattern.match(password), password


async def test_a_password_longer_than_128_characters_is_refused(mor_tenant: Tenant) -> None:
    await _refused(mor_tenant.client, "a1" * 65)


async def test_the_password_is_kept_only_as_an_argon2id_hash(
    mor_tenant: Tenant, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    created = await simple_user(mor_tenant.client)
    async with session_factory() as session:
        stored = (
            await session.execute(
                select(MorCredential.password_hash).where(MorCredential.user_id == created["Id"])
            )
        ).scalar_one()
    assert stored.startswith("$argon2id$")
    assert PASSWORD not in stored
