"""One request is one transaction: its writes commit together or not at all."""

from __future__ import annotations

from fastapi import FastAPI, status
from sqlalchemy import func, select

from finplat.errors import Conflict
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.users.models import User
from finplat.users.repository import UserRepository
from tests.factories import user_payload
from tests.isolated import isolated


def _mount_writing_routes(app: FastAPI) -> FastAPI:
    router = api_router()

    async def write_user(session: DbSession, principal: CurrentPrincipal, external_id: str) -> None:
        payload = user_payload(ExternalUserId=external_id)
        await UserRepository(session, principal.company_id).add(
            User(
                external_user_id=external_id,
                email=payload["Email"],
                first_name="Ada",
                last_name="Lovelace",
                phone=payload["Phone"],
                account_type="personal",
                date_of_birth=__import__("datetime").date(1990, 1, 1),
                country="GB",
                status="ACTIVE",
                kyc_status="NOT_STARTED",
            )
        )

    @router.post("/test/write-then-crash", status_code=status.HTTP_204_NO_CONTENT)
    async def write_then_crash(session: DbSession, principal: CurrentPrincipal) -> None:
        await write_user(session, principal, "crash")
        raise RuntimeError("boom after the write")

    @router.post("/test/write-then-refuse", status_code=status.HTTP_204_NO_CONTENT)
    async def write_then_refuse(session: DbSession, principal: CurrentPrincipal) -> None:
        await write_user(session, principal, "refuse")
        raise Conflict("refused after the write")

    @router.post("/test/write", status_code=status.HTTP_204_NO_CONTENT)
    async def write(session: DbSession, principal: CurrentPrincipal) -> None:
        await write_user(session, principal, "kept")

    app.include_router(router)
    return app


async def _user_count(app, company_id: int, external_id: str) -> int:  # type: ignore[no-untyped-def]
    async with app.state.session_factory() as session:
        stmt = (
            select(func.count())
            .select_from(User)
            .where(User.company_id == company_id, User.external_user_id == external_id)
        )
        return int((await session.execute(stmt)).scalar_one())


async def test_unhandled_error_after_a_write_leaves_nothing_behind() -> None:
    async with isolated("uow") as env:
        app, client, cid = _mount_writing_routes(env.app), env.client, env.company_id
        response = await client.post("/test/write-then-crash")
        assert response.status_code == 500
        assert await _user_count(app, cid, "crash") == 0


async def test_api_error_after_a_write_leaves_nothing_behind() -> None:
    async with isolated("uow") as env:
        app, client, cid = _mount_writing_routes(env.app), env.client, env.company_id
        response = await client.post("/test/write-then-refuse")
        assert response.status_code == 409
        assert await _user_count(app, cid, "refuse") == 0


async def test_successful_request_commits_its_writes() -> None:
    async with isolated("uow") as env:
        app, client, cid = _mount_writing_routes(env.app), env.client, env.company_id
        response = await client.post("/test/write")
        assert response.status_code == 204
        assert await _user_count(app, cid, "kept") == 1


async def test_user_created_over_http_is_committed() -> None:
    async with isolated("uow") as env:
        app, client, cid = env.app, env.client, env.company_id
        response = await client.post("/api/v2/users", json=user_payload(ExternalUserId="real"))
        assert response.status_code == 201
        assert await _user_count(app, cid, "real") == 1
