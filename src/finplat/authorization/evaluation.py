"""Evaluating a company's authorization rules on one authorization request, in priority order.

Every applicable rule (active, in effect, scoped to the card, its user or its BIN range) is
evaluated; each that fires is reported with why. The first that fires outside shadow mode
declines the purchase (`RULE_DECLINED`, the rule's `ResponseCode`, `57` by default); a rule in
shadow mode is only reported. Velocity limits count the purchases approved in the calendar
window (UTC) on the card, or on the user's cards for a `USER` rule, the request included: the
caller holds the card's lock, and a `USER` rule takes the user's (`lock_user_purchases`), so
parallel purchases never pass a limit together.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.authorization import repository
from finplat.authorization.models import AuthorizationRule
from finplat.authorization.schemas import RuleKind, RuleScope, VelocityWindow
from finplat.kit.clock import utcnow
from finplat.kit.money import from_minor, to_minor

DEFAULT_RESPONSE_CODE = "57"


@dataclass(frozen=True)
class Purchase:
    company_id: int
    card_id: int
    user_id: int
    provider: str
    amount_minor: int
    currency: str
    mcc: str | None
    country: str | None


@dataclass(frozen=True)
class Outcome:
    fired: list[dict[str, Any]]
    declined_by: AuthorizationRule | None

    @property
    def response_code(self) -> str:
        if self.declined_by is None:
            return DEFAULT_RESPONSE_CODE
        return self.declined_by.response_code or DEFAULT_RESPONSE_CODE


async def evaluate(session: AsyncSession, purchase: Purchase) -> Outcome:
    now = utcnow()
    rules = await repository.RuleRepository(session, purchase.company_id).applicable(
        card_id=purchase.card_id,
        user_id=purchase.user_id,
        provider=purchase.provider,
        now=now,
    )
    fired: list[dict[str, Any]] = []
    declined_by = None
    for rule in rules:
        reason = await _reason(session, rule, purchase, now)
        if reason is None:
            continue
        fired.append(
            {
                "RuleId": rule.id,
                "Name": rule.name,
                "RuleType": rule.rule_type,
                "Shadow": rule.shadow,
                "Reason": reason,
            }
        )
        if declined_by is None and not rule.shadow:
            declined_by = rule
    return Outcome(fired, declined_by)


async def _reason(
    session: AsyncSession, rule: AuthorizationRule, purchase: Purchase, now: datetime
) -> str | None:
    config = json.loads(rule.configuration, parse_float=Decimal)
    match RuleKind(rule.rule_type):
        case RuleKind.MCC_BLOCK:
            if purchase.mcc in config["Mccs"]:
                return f"Merchant category {purchase.mcc} is blocked."
        case RuleKind.MCC_ALLOW:
            if purchase.mcc not in config["Mccs"]:
                return f"Merchant category {purchase.mcc or 'unknown'} is not allowed."
        case RuleKind.COUNTRY_BLOCK:
            if purchase.country in config["Countries"]:
                return f"Merchant country {purchase.country} is blocked."
        case RuleKind.COUNTRY_ALLOW:
            if purchase.country not in config["Countries"]:
                return f"Merchant country {purchase.country or 'unknown'} is not allowed."
        case RuleKind.MAX_AMOUNT:
            limit = _limit(config["MaxAmount"], config["Currency"], purchase)
            if limit is not None and purchase.amount_minor > limit:
                return f"{_money(purchase.amount_minor, purchase)} is above {config['MaxAmount']}."
        case RuleKind.VELOCITY:
            return await _velocity(session, rule, config, purchase, now)
    return None


async def _velocity(
    session: AsyncSession,
    rule: AuthorizationRule,
    config: dict[str, Any],
    purchase: Purchase,
    now: datetime,
) -> str | None:
    window = VelocityWindow(config["Window"])
    per_user = rule.scope_type == RuleScope.USER.value
    if per_user:
        await repository.lock_user_purchases(session, user_id=purchase.user_id)
    count, amount = await repository.approved_since(
        session,
        company_id=purchase.company_id,
        since=window_start(window, now),
        card_id=None if per_user else purchase.card_id,
        user_id=purchase.user_id if per_user else None,
    )
    max_count = config.get("MaxCount")
    if max_count is not None and count + 1 > max_count:
        return f"More than {max_count} purchases this {window.value.lower()}."
    if config.get("MaxAmount") is not None:
        limit = _limit(config["MaxAmount"], config["Currency"], purchase)
        if limit is not None and amount + purchase.amount_minor > limit:
            return f"More than {config['MaxAmount']} spent this {window.value.lower()}."
    return None


def window_start(window: VelocityWindow, now: datetime) -> datetime:
    day = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if window is VelocityWindow.DAY:
        return day
    if window is VelocityWindow.WEEK:
        return day - timedelta(days=day.weekday())
    return day.replace(day=1)


def _limit(amount: Any, currency: str, purchase: Purchase) -> int | None:
    """The limit in the purchase's minor units; none applies in another currency."""
    if currency != purchase.currency:
        return None
    return to_minor(Decimal(str(amount)), currency)


def _money(minor: int, purchase: Purchase) -> str:
    return f"{from_minor(minor, purchase.currency)} {purchase.currency}"
