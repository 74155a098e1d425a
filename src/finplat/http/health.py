"""`GET /healthz`: no auth; 200 when the database answers, 503 otherwise."""

from __future__ import annotations

from fastapi import Request
from sqlalchemy import text

from finplat.errors import ServiceUnavailable, error_responses
from finplat.http.indexed_router import IndexedRouter
from finplat.kit.schemas import ResponseModel

router = IndexedRouter(tags=["Health"])


class Health(ResponseModel):
    Status: str


@router.get(
    "/healthz",
    response_model=Health,
    summary="Liveness and database reachability",
    responses={503: error_responses(503)[503]},
)
async def healthz(request: Request) -> Health:
    try:
        async with request.app.state.session_factory() as session:
            await session.execute(text("SELECT 1"))
    except Exception:
        raise ServiceUnavailable("The database is not reachable.") from None
    return Health(Status="ok")
