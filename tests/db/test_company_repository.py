"""A company repository's read by id: the session's copy, or the database's row when asked."""

from __future__ import annotations

from sqlalchemy import update

from finplat.users.models import User
from finplat.users.repository import UserRepository
from tests.factories import user_payload
from tests.isolated import isolated


async def test_a_fresh_read_by_id_sees_what_another_transaction_committed() -> None:
    async with isolated("fresh-read") as env:
        created = await env.client.post("/api/v2/users", json=user_payload(FirstName="Ada"))
        assert created.status_code == 201, created.text
        user_id = created.json()["Id"]
        factory = env.app.state.session_factory
        async with factory() as session:
            users = UserRepository(session, env.company_id)
            held = await users.get(user_id)
            assert held is not None
            assert held.first_name == "Ada"
            await session.commit()  # the copy stays loaded (SQLite's one connection is free)
            async with factory() as other, other.begin():
                await other.execute(
                    update(User).where(User.id == user_id).values(first_name="Grace")
                )
            # An ordinary read keeps the copy the session holds; a fresh one replaces it.
            assert (await users.get(user_id)) is held
            assert held.first_name == "Ada"
            assert (await users.get(user_id, fresh=True)) is held
            assert held.first_name == "Grace"
