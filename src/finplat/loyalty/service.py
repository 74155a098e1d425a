"""Loyalty set-up: programmes, merchants and their MIDs, import configurations, and the points
a user holds. Points are not money: they are counted on the awards, never in the ledger."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.clock import utcnow
from finplat.loyalty.errors import (
    ImportConfigNotFound,
    MerchantNotFound,
    MidInUse,
    MidNotFound,
    PointsRuleConflict,
    ProgramNotFound,
)
from finplat.loyalty.models import (
    LoyaltyImportConfig,
    LoyaltyMerchant,
    LoyaltyMid,
    LoyaltyProgram,
    LoyaltyProgramStatus,
    PointsRule,
)
from finplat.loyalty.repository import (
    AwardRepository,
    ImportConfigRepository,
    MerchantRepository,
    MidRepository,
    ProgramRepository,
)
from finplat.users import service as users


@dataclass(frozen=True)
class ProgramTerms:
    """What a create or an update sends; None leaves a field as it is."""

    name: str | None = None
    status: LoyaltyProgramStatus | None = None
    points_rule: PointsRule | None = None
    points_per_unit: int | None = None
    points_per_transaction: int | None = None


DEFAULT_RATE = 1


def _rate(rule: PointsRule, terms: ProgramTerms) -> int | None:
    """The rate the rule uses, as sent (None: not sent). The other rule's rate is not the
    programme's and is left aside: a client may send both and switch rules by `PointsRule`."""
    if rule is PointsRule.PER_CURRENCY_UNIT:
        return terms.points_per_unit
    return terms.points_per_transaction


async def create_program(
    session: AsyncSession, *, company_id: int, terms: ProgramTerms
) -> LoyaltyProgram:
    rule = terms.points_rule or PointsRule.PER_CURRENCY_UNIT
    return await ProgramRepository(session, company_id).add(
        LoyaltyProgram(
            name=terms.name,
            status=(terms.status or LoyaltyProgramStatus.ACTIVE).value,
            points_rule=rule.value,
            points_rate=_rate(rule, terms) or DEFAULT_RATE,
        )
    )


async def find_program(
    session: AsyncSession, *, company_id: int, program_id: int
) -> LoyaltyProgram:
    found = await ProgramRepository(session, company_id).get(program_id)
    if found is None:
        raise ProgramNotFound()
    return found


async def list_programs(session: AsyncSession, *, company_id: int) -> Sequence[LoyaltyProgram]:
    return await ProgramRepository(session, company_id).all()


async def update_program(
    session: AsyncSession, *, company_id: int, program_id: int, terms: ProgramTerms
) -> LoyaltyProgram:
    """A new rule or rate applies to awards made from now on; awards already made keep the
    rule they were made under (a refund takes back what was given)."""
    program = await find_program(session, company_id=company_id, program_id=program_id)
    if terms.name is not None:
        program.name = terms.name
    if terms.status is not None:
        program.status = terms.status.value
    changes_rate = terms.points_per_unit is not None or terms.points_per_transaction is not None
    if terms.points_rule is not None or changes_rate:
        rule = terms.points_rule or PointsRule(program.points_rule)
        rate = _rate(rule, terms)
        if rate is None and terms.points_rule is None:
            # Only the other rule's rate came, and the stored rule, not the request, makes it
            # the wrong one: a conflict with state.
            field = (
                "PointsPerUnit" if rule is PointsRule.PER_CURRENCY_UNIT else "PointsPerTransaction"
            )
            raise PointsRuleConflict(validation_errors={field: [f"Used by {rule.value}."]})
        if rate is None:
            # A new rule without its rate: the stored rate if the rule stays, else the default.
            same = rule.value == program.points_rule
            rate = program.points_rate if same else DEFAULT_RATE
        program.points_rule = rule.value
        program.points_rate = rate
    program.updated_at = utcnow()
    await session.flush()
    return program


async def create_merchant(
    session: AsyncSession,
    *,
    company_id: int,
    program_id: int,
    name: str,
    city: str | None,
    country: str | None,
    mids: Sequence[str],
) -> tuple[LoyaltyMerchant, list[LoyaltyMid]]:
    await find_program(session, company_id=company_id, program_id=program_id)
    merchant = await MerchantRepository(session, company_id).add(
        LoyaltyMerchant(program_id=program_id, name=name, city=city, country=country)
    )
    added = [await _add_mid(session, company_id, merchant, mid) for mid in dict.fromkeys(mids)]
    return merchant, added


async def find_merchant(
    session: AsyncSession, *, company_id: int, merchant_id: int
) -> LoyaltyMerchant:
    found = await MerchantRepository(session, company_id).get(merchant_id)
    if found is None:
        raise MerchantNotFound()
    return found


async def list_merchants(
    session: AsyncSession, *, company_id: int, program_id: int | None
) -> list[tuple[LoyaltyMerchant, list[LoyaltyMid]]]:
    merchants = await MerchantRepository(session, company_id).all(program_id=program_id)
    mids = await MidRepository(session, company_id).of_merchants([m.id for m in merchants])
    by_merchant: dict[int, list[LoyaltyMid]] = {m.id: [] for m in merchants}
    for mid in mids:
        by_merchant[mid.merchant_id].append(mid)
    return [(m, by_merchant[m.id]) for m in merchants]


async def mids_of(session: AsyncSession, *, company_id: int, merchant_id: int) -> list[LoyaltyMid]:
    await find_merchant(session, company_id=company_id, merchant_id=merchant_id)
    return list(await MidRepository(session, company_id).of_merchants([merchant_id]))


async def add_mid(
    session: AsyncSession, *, company_id: int, merchant_id: int, mid: str
) -> LoyaltyMid:
    merchant = await find_merchant(session, company_id=company_id, merchant_id=merchant_id)
    return await _add_mid(session, company_id, merchant, mid)


async def _add_mid(
    session: AsyncSession, company_id: int, merchant: LoyaltyMerchant, mid: str
) -> LoyaltyMid:
    repo = MidRepository(session, company_id)
    if await repo.by_mid(mid) is not None:
        raise MidInUse()
    try:
        async with session.begin_nested():
            return await repo.add(LoyaltyMid(merchant_id=merchant.id, mid=mid, created_at=utcnow()))
    except IntegrityError:
        # Added by a concurrent request between the check and the insert.
        raise MidInUse() from None


async def delete_mid(
    session: AsyncSession, *, company_id: int, merchant_id: int, mid_id: int
) -> None:
    """Purchases already matched keep their merchant and points; later purchases with this
    MID match nothing."""
    await find_merchant(session, company_id=company_id, merchant_id=merchant_id)
    repo = MidRepository(session, company_id)
    found = await repo.get(mid_id)
    if found is None or found.merchant_id != merchant_id or not await repo.remove(found):
        raise MidNotFound()


async def create_import_config(
    session: AsyncSession, *, company_id: int, program_id: int, name: str, delimiter: str
) -> LoyaltyImportConfig:
    await find_program(session, company_id=company_id, program_id=program_id)
    return await ImportConfigRepository(session, company_id).add(
        LoyaltyImportConfig(program_id=program_id, name=name, delimiter=delimiter)
    )


async def find_import_config(
    session: AsyncSession, *, company_id: int, config_id: int
) -> LoyaltyImportConfig:
    found = await ImportConfigRepository(session, company_id).get(config_id)
    if found is None:
        raise ImportConfigNotFound()
    return found


async def list_import_configs(
    session: AsyncSession, *, company_id: int
) -> Sequence[LoyaltyImportConfig]:
    return await ImportConfigRepository(session, company_id).all()


async def points_of(
    session: AsyncSession, *, company_id: int, user_id: int
) -> list[tuple[int, int]]:
    """(programme id, points) of the user, for each programme the user has awards under."""
    await users.get_user(session, company_id=company_id, user_id=user_id)
    return await AwardRepository(session, company_id).points_by_program(user_id)
