"""One page shape and one pair of query parameters for every list endpoint.

Query names follow the spec (`page`, `pageSize`); pages are 1-based. A `pageSize` above the
maximum is refused with 400 rather than clamped, so a client never silently gets fewer rows per
page than it asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Generic, Self, TypeVar

from fastapi import Depends, Query
from pydantic import BaseModel, Field
from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
MAX_PAGE = 1_000_000

ItemT = TypeVar("ItemT")
RowT = TypeVar("RowT")


@dataclass(frozen=True, slots=True)
class PageRequest:
    page: int
    page_size: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.page_size


# `async def` though it awaits nothing: FastAPI runs a plain `def` dependency in a thread.
async def page_request(
    page: Annotated[int, Query(ge=1, le=MAX_PAGE, description="1-based page number.")] = 1,
    page_size: Annotated[
        int,
        Query(
            alias="pageSize",
            ge=1,
            le=MAX_PAGE_SIZE,
            description=f"Items per page, at most {MAX_PAGE_SIZE}.",
        ),
    ] = DEFAULT_PAGE_SIZE,
) -> PageRequest:
    return PageRequest(page=page, page_size=page_size)


PageParams = Annotated[PageRequest, Depends(page_request)]


@dataclass(frozen=True, slots=True)
class PageSlice(Generic[RowT]):
    rows: Sequence[RowT]
    has_more: bool


class Page(BaseModel, Generic[ItemT]):
    Items: list[ItemT]
    Page: int = Field(description="The 1-based page number returned.")
    PageSize: int
    HasMore: bool = Field(description="Whether a further page exists.")

    @classmethod
    def of(cls, rows: PageSlice[RowT], request: PageRequest, item: Callable[[RowT], ItemT]) -> Self:
        """The page for `request`, each row turned into its response item by `item`."""
        return cls(
            Items=[item(row) for row in rows.rows],
            Page=request.page,
            PageSize=request.page_size,
            HasMore=rows.has_more,
        )


async def fetch_page(
    session: AsyncSession, stmt: Select[RowT], request: PageRequest
) -> PageSlice[RowT]:
    """Run an ordered statement for one page; one extra row tells whether more exist."""
    limited = stmt.offset(request.offset).limit(request.page_size + 1)
    rows = list((await session.execute(limited)).scalars())
    return PageSlice(rows=rows[: request.page_size], has_more=len(rows) > request.page_size)
