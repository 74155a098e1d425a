"""Authorization rules and the company's BIN ranges."""

from __future__ import annotations

from fastapi import Request, Response, status

from finplat.authorization import service
from finplat.authorization.schemas import (
    CONFIGURATION_DOC,
    BinRangeList,
    RuleCreate,
    RuleIdPath,
    RuleList,
    RuleResponse,
    RuleUpdate,
)
from finplat.errors import error_responses
from finplat.http.routing import CurrentPrincipal, DbSession, api_router
from finplat.idempotency.http import IdempotencyKeyHeader, claim_request

router = api_router(tags=["Authorization rules"])

RULES = "/api/v2/authorization/rules"


@router.post(
    RULES,
    response_model=RuleResponse,
    summary="Create an authorization rule",
    description="Evaluated on every authorization of the cards in its scope, in `Priority` "
    "order (lower first): `COMPANY` (the BIN range's cards; `BinRangeId` required), `USER` "
    "(the user's cards of the BIN range; `UserId` and `BinRangeId` required) or `CARD` (one "
    "card; its BIN range is its product's, another `BinRangeId` is 400 `BIN_RANGE_CONFLICT`). "
    "A rule that fires declines the purchase `RULE_DECLINED` with its `ResponseCode` (`57` by "
    "default) and is reported in `RulesFired`; with `Shadow` it is only reported. Active "
    "between `EffectiveFrom` and `EffectiveTo` when given. " + CONFIGURATION_DOC + " Safe to "
    "retry with `Idempotency-Key`.",
    responses=error_responses(400, 404, 409),
)
async def authorization_rules_create(
    body: RuleCreate,
    request: Request,
    session: DbSession,
    principal: CurrentPrincipal,
    idempotency_key: IdempotencyKeyHeader = None,
) -> RuleResponse:
    await claim_request(request, session, principal, idempotency_key)  # replays end here
    rule = await service.create(session, company_id=principal.company_id, fields=body)
    return RuleResponse.of(rule)


@router.get(
    RULES,
    response_model=RuleList,
    summary="List the company's authorization rules",
    description="In evaluation order (`Priority`, then creation).",
    responses=error_responses(400),
)
async def authorization_rules_list(session: DbSession, principal: CurrentPrincipal) -> RuleList:
    rules = await service.list_rules(session, company_id=principal.company_id)
    return RuleList(Rules=[RuleResponse.of(r) for r in rules])


@router.get(
    RULES + "/{ruleId}",
    response_model=RuleResponse,
    summary="Read an authorization rule",
    description="404 `AUTHORIZATION_RULE_NOT_FOUND` for an unknown id (or another company's).",
    responses=error_responses(400, 404),
)
async def authorization_rules_read(
    ruleId: RuleIdPath, session: DbSession, principal: CurrentPrincipal
) -> RuleResponse:
    return RuleResponse.of(
        await service.get(session, company_id=principal.company_id, rule_id=ruleId)
    )


@router.patch(
    RULES + "/{ruleId}",
    response_model=RuleResponse,
    summary="Change an authorization rule",
    description="The fields given change; the rule as changed is checked as a new one is "
    "(a new `RuleType` needs its `Configuration`). `Active: false` turns it off, `Shadow` "
    "moves it in or out of shadow mode.",
    responses=error_responses(400, 404),
)
async def authorization_rules_update(
    ruleId: RuleIdPath, body: RuleUpdate, session: DbSession, principal: CurrentPrincipal
) -> RuleResponse:
    rule = await service.update(
        session, company_id=principal.company_id, rule_id=ruleId, fields=body
    )
    return RuleResponse.of(rule)


@router.delete(
    RULES + "/{ruleId}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Delete an authorization rule",
    description="It is no longer evaluated; purchases it fired on keep it in `RulesFired`.",
    responses=error_responses(400, 404),
)
async def authorization_rules_delete(
    ruleId: RuleIdPath, session: DbSession, principal: CurrentPrincipal
) -> Response:
    await service.delete(session, company_id=principal.company_id, rule_id=ruleId)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/api/v2/authorization/bin-ranges",
    response_model=BinRangeList,
    summary="The company's BIN ranges",
    description="One per card programme the company's card products are issued on, with "
    "those products' `CardTypeId`s: the `BinRangeId` of `COMPANY` and `USER` rules.",
    responses=error_responses(400),
)
async def authorization_bin_ranges(session: DbSession, principal: CurrentPrincipal) -> BinRangeList:
    return BinRangeList.of(await service.bin_ranges(session, company_id=principal.company_id))
