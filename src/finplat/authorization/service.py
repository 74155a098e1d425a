"""Authorization rules: create, read, change and delete a company's rules, and its BIN ranges.

The spec's rule fields are all optional on the wire; a rule still needs a `RuleType` and its
`Configuration`. `ScopeType` (default `COMPANY`): `COMPANY` and `USER` rules need a
`BinRangeId` (400 `BIN_RANGE_REQUIRED`; one of the company's, else 404
`BIN_RANGE_NOT_FOUND`), a `USER` rule its `UserId`, a `CARD` rule its `CardId`; a `CARD` rule's
BIN range is its card product's, and a different `BinRangeId` is 400 `BIN_RANGE_CONFLICT`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.authorization import repository
from finplat.authorization.models import AuthorizationRule
from finplat.authorization.repository import RuleRepository
from finplat.authorization.schemas import (
    CONFIGURATIONS,
    RuleKind,
    RuleScope,
    RuleSettings,
    Velocity,
)
from finplat.cards import lookup
from finplat.errors import ApiError, Conflict, NotFound, ValidationFailed
from finplat.kit.clock import utcnow
from finplat.kit.money import ExcessPrecision, exact_json_numbers, to_minor
from finplat.providers.registry import CARD_BINS
from finplat.users import service as users

DEFAULT_PRIORITY = 100


class RuleNotFound(NotFound):
    code = "AUTHORIZATION_RULE_NOT_FOUND"
    message = "No authorization rule with that id."


class BinRangeNotFound(NotFound):
    code = "BIN_RANGE_NOT_FOUND"
    message = "No BIN range with that id."


class BinRangeRequired(ValidationFailed):
    code = "BIN_RANGE_REQUIRED"
    message = "COMPANY and USER rules need a BinRangeId."


class BinRangeConflict(Conflict):
    code = "BIN_RANGE_CONFLICT"
    message = "A CARD rule's BIN range is its card product's: BinRangeId names another one."


@dataclass(frozen=True)
class BinRange:
    """One issuing BIN the company's card products use (one per card programme). Its id is
    the lowest `CardTypeId` issued on it: the company's own, stable while the product is."""

    id: int
    provider: str
    bin: str
    card_type_ids: list[int]


async def bin_ranges(session: AsyncSession, *, company_id: int) -> list[BinRange]:
    """The company's BIN ranges with the card products (`CardTypeId`s) issued on each."""
    products = await repository.product_providers(session, company_id=company_id)
    return sorted(
        (
            BinRange(ids[0], provider, CARD_BINS[provider], ids)
            for provider, ids in products.items()
            if provider in CARD_BINS
        ),
        key=lambda r: r.id,
    )


async def bin_range_of_card_provider(
    session: AsyncSession, *, company_id: int, provider: str
) -> BinRange | None:
    found = await bin_ranges(session, company_id=company_id)
    return next((r for r in found if r.provider == provider), None)


async def list_rules(session: AsyncSession, *, company_id: int) -> list[AuthorizationRule]:
    return await RuleRepository(session, company_id).all()


async def get(session: AsyncSession, *, company_id: int, rule_id: int) -> AuthorizationRule:
    rule = await RuleRepository(session, company_id).get(rule_id)
    if rule is None:
        raise RuleNotFound()
    return rule


async def create(
    session: AsyncSession, *, company_id: int, fields: RuleSettings
) -> AuthorizationRule:
    rule = AuthorizationRule(priority=DEFAULT_PRIORITY, active=True, shadow=False)
    await _apply(session, company_id, rule, fields, set(fields.model_fields_set), creating=True)
    return await RuleRepository(session, company_id).add(rule)


async def update(
    session: AsyncSession, *, company_id: int, rule_id: int, fields: RuleSettings
) -> AuthorizationRule:
    rule = await get(session, company_id=company_id, rule_id=rule_id)
    given = {name for name in fields.model_fields_set if getattr(fields, name) is not None}
    if "Configuration" in given and "RuleType" not in given:
        raise ValidationFailed(
            validation_errors={"RuleType": ["A new Configuration comes with its RuleType."]}
        )
    await _apply(session, company_id, rule, fields, given, creating=False)
    rule.updated_at = utcnow()
    await session.flush()
    return rule


async def delete(session: AsyncSession, *, company_id: int, rule_id: int) -> None:
    rule = await get(session, company_id=company_id, rule_id=rule_id)
    await session.delete(rule)
    await session.flush()


_COLUMNS = {
    "Name": "name",
    "Description": "description",
    "ScopeType": "scope_type",
    "UserId": "user_id",
    "CardId": "card_id",
    "BinRangeId": "bin_range_id",
    "RuleType": "rule_type",
    "ResponseCode": "response_code",
    "Priority": "priority",
    "Active": "active",
    "Shadow": "shadow",
    "EffectiveFrom": "effective_from",
    "EffectiveTo": "effective_to",
}


async def _apply(
    session: AsyncSession,
    company_id: int,
    rule: AuthorizationRule,
    fields: RuleSettings,
    given: set[str],
    *,
    creating: bool,
) -> None:
    """Set the given fields on the rule and validate the rule as it then is."""
    for wire, column in _COLUMNS.items():
        if wire in given and hasattr(fields, wire):
            value = getattr(fields, wire)
            if wire in ("Priority", "Active", "Shadow") and value is None:
                continue  # null keeps the default
            setattr(rule, column, value.value if hasattr(value, "value") else value)
    rule.scope_type = rule.scope_type or RuleScope.COMPANY.value
    if rule.rule_type is None:
        raise ValidationFailed(validation_errors={"RuleType": ["A rule needs a RuleType."]})
    if "Configuration" in given or "RuleType" in given:
        rule.configuration = _configuration(RuleKind(rule.rule_type), fields.Configuration)
    if creating:
        await _check_scope(session, company_id, rule)


def _configuration(rule_type: RuleKind, sent: dict[str, Any] | None) -> str:
    if sent is None:
        raise ValidationFailed(
            validation_errors={"Configuration": [f"A {rule_type.value} rule needs one."]}
        )
    try:
        config = CONFIGURATIONS[rule_type].model_validate(sent)
    except ValidationError as exc:
        errors: dict[str, list[str]] = {}
        for error in exc.errors(include_url=False):
            key = ".".join(["Configuration", *(str(p) for p in error["loc"])])
            errors.setdefault(key, []).append(error["msg"].removeprefix("Value error, "))
        raise ValidationFailed(validation_errors=errors) from None
    max_amount, currency = getattr(config, "MaxAmount", None), getattr(config, "Currency", None)
    if max_amount is not None and currency is not None:
        try:
            to_minor(max_amount, currency)
        except (ApiError, ExcessPrecision):
            raise ValidationFailed(
                validation_errors={"Configuration.MaxAmount": ["Too many decimals."]}
            ) from None
    if isinstance(config, Velocity):
        if config.MaxCount is None and config.MaxAmount is None:
            raise ValidationFailed(
                validation_errors={"Configuration": ["Give MaxCount, MaxAmount or both."]}
            )
        if config.MaxAmount is not None and config.Currency is None:
            raise ValidationFailed(
                validation_errors={"Configuration.Currency": ["Required with MaxAmount."]}
            )
    # Amounts are kept as exact JSON numbers.
    rendered = json.dumps(config.model_dump(mode="json", exclude_none=True), separators=(",", ":"))
    return exact_json_numbers(rendered.encode()).decode()


async def _check_scope(session: AsyncSession, company_id: int, rule: AuthorizationRule) -> None:
    scope = RuleScope(rule.scope_type)
    if rule.user_id is not None:
        # A user id that names nobody is 404 USER_NOT_FOUND wherever it appears.
        await users.get_user(session, company_id=company_id, user_id=rule.user_id)
    if scope is RuleScope.CARD:
        if rule.card_id is None:
            raise ValidationFailed(validation_errors={"CardId": ["A CARD rule needs a CardId."]})
        card = await lookup.find_card(session, company_id=company_id, card_id=rule.card_id)
        rule.user_id = card.user_id  # the card names its user
        own = await bin_range_of_card_provider(
            session, company_id=company_id, provider=card.provider
        )
        if rule.bin_range_id is not None and (own is None or own.id != rule.bin_range_id):
            raise BinRangeConflict()
        rule.bin_range_id = own.id if own is not None else None
        return
    if rule.bin_range_id is None:
        raise BinRangeRequired()
    if all(r.id != rule.bin_range_id for r in await bin_ranges(session, company_id=company_id)):
        raise BinRangeNotFound()
    if scope is RuleScope.USER:
        if rule.user_id is None:
            raise ValidationFailed(validation_errors={"UserId": ["A USER rule needs a UserId."]})
        await users.get_user(session, company_id=company_id, user_id=rule.user_id)
        rule.card_id = None
    else:
        rule.user_id = rule.card_id = None
