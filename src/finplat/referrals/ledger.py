"""Reading the reward ledger: a beneficiary's rewards, and the programme's overview, whose
totals are sums of the ledger."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.pagination import PageRequest, PageSlice
from finplat.referrals import programs, repository
from finplat.referrals.models import ReferralLevelChange, ReferralProgram, ReferralReward
from finplat.referrals.repository import (
    LedgerTotals,
    LevelChangeRepository,
    RelationshipRepository,
    RewardRepository,
)
from finplat.users import service as users


def friend_alias(first_name: str, last_name: str) -> str:
    """How a friend is shown to the other party: first name and last initial ("Ada L.")."""
    initial = f" {last_name[:1]}." if last_name else ""
    return f"{first_name}{initial}"


@dataclass(frozen=True, slots=True)
class RewardPage:
    rows: PageSlice[ReferralReward]
    aliases: dict[int, str]


async def rewards_of(
    session: AsyncSession,
    *,
    company_id: int,
    user_id: int,
    program_id: str | None,
    page: PageRequest,
) -> RewardPage:
    await users.get_user(session, company_id=company_id, user_id=user_id)
    rows = await RewardRepository(session, company_id).page(user_id, page, program_id=program_id)
    names = await repository.user_names(
        session, company_id=company_id, user_ids={r.friend_user_id for r in rows.rows}
    )
    aliases = {i: friend_alias(first, last) for i, (first, last) in names.items()}
    return RewardPage(rows, aliases)


@dataclass(frozen=True, slots=True)
class Overview:
    program: ReferralProgram | None
    relationships: int
    qualified: int
    totals: LedgerTotals


async def overview(session: AsyncSession, *, company_id: int) -> Overview:
    program = await programs.current(session, company_id=company_id)
    if program is None:
        return Overview(None, 0, 0, LedgerTotals(0, 0, 0))
    total, qualified = await RelationshipRepository(session, company_id).counts(program.id)
    totals = await RewardRepository(session, company_id).totals(program.id)
    return Overview(program, total, qualified, totals)


async def level_history(
    session: AsyncSession, *, company_id: int, program_id: str, user_id: int, page: PageRequest
) -> PageSlice[ReferralLevelChange]:
    await programs.require(session, company_id=company_id, program_id=program_id)
    await users.get_user(session, company_id=company_id, user_id=user_id)
    return await LevelChangeRepository(session, company_id).page(program_id, user_id, page)


async def rewards_aliases(
    session: AsyncSession, *, company_id: int, user_ids: set[int]
) -> dict[int, str]:
    names = await repository.user_names(session, company_id=company_id, user_ids=user_ids)
    return {i: friend_alias(first, last) for i, (first, last) in names.items()}
