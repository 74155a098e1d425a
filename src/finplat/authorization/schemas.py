"""Wire shapes of authorization rules (PascalCase, per the spec) and each rule type's
`Configuration`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from fastapi import Path
from pydantic import ConfigDict, Field, JsonValue
from pydantic.config import JsonDict

from finplat.authorization.models import AuthorizationRule
from finplat.business.schemas import DateTimeValue
from finplat.cards.funding.schemas import CardCurrency
from finplat.kit.fields import SafeText
from finplat.kit.money import AmountRange, DecimalAmount, amount_for_json
from finplat.kit.schemas import MAX_ID, PARAMETER_ID, BodyId, RequestModel, ResponseModel

RuleIdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="The rule's `RuleId`."), PARAMETER_ID]


class RuleScope(StrEnum):
    COMPANY = "COMPANY"  # every card of the BIN range
    USER = "USER"  # the user's cards of the BIN range
    CARD = "CARD"  # one card (its BIN range comes from its product)


class RuleKind(StrEnum):
    MCC_BLOCK = "MCC_BLOCK"
    MCC_ALLOW = "MCC_ALLOW"
    COUNTRY_BLOCK = "COUNTRY_BLOCK"
    COUNTRY_ALLOW = "COUNTRY_ALLOW"
    MAX_AMOUNT = "MAX_AMOUNT"
    VELOCITY = "VELOCITY"


class VelocityWindow(StrEnum):
    DAY = "DAY"  # since 00:00 UTC today
    WEEK = "WEEK"  # since Monday 00:00 UTC
    MONTH = "MONTH"  # since the 1st, 00:00 UTC


Mcc = Annotated[str, Field(pattern=r"^[0-9]{4}$")]
Country = Annotated[str, Field(pattern=r"^[A-Z]{2}$")]
CurrencyCode = Annotated[CardCurrency, Field(strict=False)]
Limit = Annotated[DecimalAmount, AmountRange(greater_than=Decimal(0), at_most=Decimal(10**9))]


class MccList(RequestModel):
    Mccs: Annotated[list[Mcc], Field(min_length=1, max_length=500)]


class CountryList(RequestModel):
    Countries: Annotated[list[Country], Field(min_length=1, max_length=250)]


class MaxAmount(RequestModel):
    MaxAmount: Limit
    Currency: CurrencyCode


class Velocity(RequestModel):
    Window: Annotated[VelocityWindow, Field(strict=False)]
    MaxCount: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    MaxAmount: Limit | None = None
    Currency: CurrencyCode | None = None


CONFIGURATIONS: dict[RuleKind, type[RequestModel]] = {
    RuleKind.MCC_BLOCK: MccList,
    RuleKind.MCC_ALLOW: MccList,
    RuleKind.COUNTRY_BLOCK: CountryList,
    RuleKind.COUNTRY_ALLOW: CountryList,
    RuleKind.MAX_AMOUNT: MaxAmount,
    RuleKind.VELOCITY: Velocity,
}

CONFIGURATION_DOC = (
    'By `RuleType`: `MCC_BLOCK` / `MCC_ALLOW` `{Mccs: ["5812", ...]}`; `COUNTRY_BLOCK` / '
    '`COUNTRY_ALLOW` `{Countries: ["GB", ...]}`; `MAX_AMOUNT` `{MaxAmount, Currency}`; '
    "`VELOCITY` `{Window: DAY|WEEK|MONTH, MaxCount?, MaxAmount?, Currency?}` (at least one "
    "limit; calendar windows in UTC; counted per card, per user for `USER` rules)."
)


# The document states what a rule needs as JSON Schema, so that what it calls valid the API
# accepts: a `RuleType` with its `Configuration` (one shape per type) and the fields its
# `ScopeType` needs. What depends on stored state (an unknown id: 404; a CARD rule's BIN
# range: 409) is left to the service.
_MCCS: JsonDict = {
    "type": "array",
    "minItems": 1,
    "maxItems": 500,
    "items": {"type": "string", "pattern": "^[0-9]{4}$"},
}
_COUNTRIES: JsonDict = {
    "type": "array",
    "minItems": 1,
    "maxItems": 250,
    "items": {"type": "string", "pattern": "^[A-Z]{2}$"},
}
_LIMIT: JsonDict = {"type": "number", "exclusiveMinimum": 0, "maximum": 10**9, "multipleOf": 0.01}
_CURRENCY: JsonDict = {"enum": [c.value for c in CardCurrency]}


def _object(properties: JsonDict, required: list[str], **more: Any) -> JsonDict:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
        **more,
    }


CONFIGURATION_SCHEMAS: dict[RuleKind, JsonDict] = {
    RuleKind.MCC_BLOCK: _object({"Mccs": _MCCS}, ["Mccs"]),
    RuleKind.MCC_ALLOW: _object({"Mccs": _MCCS}, ["Mccs"]),
    RuleKind.COUNTRY_BLOCK: _object({"Countries": _COUNTRIES}, ["Countries"]),
    RuleKind.COUNTRY_ALLOW: _object({"Countries": _COUNTRIES}, ["Countries"]),
    RuleKind.MAX_AMOUNT: _object(
        {"MaxAmount": _LIMIT, "Currency": _CURRENCY}, ["MaxAmount", "Currency"]
    ),
    RuleKind.VELOCITY: _object(
        {
            "Window": {"enum": [w.value for w in VelocityWindow]},
            "MaxCount": {"type": ["integer", "null"], "minimum": 1, "maximum": 1_000_000},
            "MaxAmount": {**_LIMIT, "type": ["number", "null"]},
            "Currency": {"enum": [*(c.value for c in CardCurrency), None]},
        },
        ["Window"],
        anyOf=[
            {"required": ["MaxCount"], "properties": {"MaxCount": {"type": "integer"}}},
            {"required": ["MaxAmount"], "properties": {"MaxAmount": {"type": "number"}}},
        ],
        # `if`/`then` are Python keywords: passed through the dict below.
    )
    | {
        "if": {"required": ["MaxAmount"], "properties": {"MaxAmount": {"type": "number"}}},
        "then": {"required": ["Currency"], "properties": {"Currency": {"type": "string"}}},
    },
}
_VARIANTS: list[JsonValue] = [
    {
        "required": ["RuleType", "Configuration"],
        "properties": {"RuleType": {"const": kind.value}, "Configuration": schema},
    }
    for kind, schema in CONFIGURATION_SCHEMAS.items()
]
_SCOPES: list[JsonValue] = [
    {
        "required": ["BinRangeId"],
        "properties": {"ScopeType": {"enum": ["COMPANY", None]}, "BinRangeId": {"type": "integer"}},
    },
    {
        "required": ["ScopeType", "UserId", "BinRangeId"],
        "properties": {
            "ScopeType": {"const": "USER"},
            "UserId": {"type": "integer"},
            "BinRangeId": {"type": "integer"},
        },
    },
    {
        "required": ["ScopeType", "CardId"],
        "properties": {"ScopeType": {"const": "CARD"}, "CardId": {"type": "integer"}},
    },
]
_NEITHER: JsonDict = {
    "properties": {"RuleType": {"type": "null"}, "Configuration": {"type": "null"}}
}


class RuleSettings(RequestModel):
    """What a rule is and does, apart from whom it applies to."""

    Name: Annotated[SafeText, Field(max_length=100)] | None = None
    Description: Annotated[SafeText, Field(max_length=500)] | None = None
    RuleType: Annotated[RuleKind, Field(strict=False)] | None = None
    ResponseCode: Annotated[str, Field(pattern=r"^[0-9A-Z]{2}$")] | None = Field(
        default=None, description="The ISO 8583 code a decline by this rule answers (`57`)."
    )
    Priority: Annotated[int, Field(ge=0, le=1_000_000)] | None = Field(
        default=None, description="Lower first; default 100."
    )
    Active: bool | None = None
    Shadow: bool | None = Field(
        default=None,
        description="Shadow mode: evaluated and reported in `RulesFired`, never declining.",
    )
    # Read by the rule type's own model (`CONFIGURATIONS`): amounts arrive exact, as decimals.
    Configuration: dict[str, Any] | None = Field(default=None, description=CONFIGURATION_DOC)
    EffectiveFrom: DateTimeValue | None = None
    EffectiveTo: DateTimeValue | None = Field(
        default=None, description="Not after `EffectiveFrom`: the rule is never in effect."
    )


class RuleCreate(RuleSettings):
    """The spec's authorization rule; `RuleType` and `Configuration` are needed to build one,
    and the fields its `ScopeType` needs."""

    model_config = ConfigDict(
        json_schema_extra={"allOf": [{"oneOf": _VARIANTS}, {"anyOf": _SCOPES}]}
    )

    ScopeType: Annotated[RuleScope, Field(strict=False)] | None = Field(
        default=None, description="Default `COMPANY`."
    )
    UserId: BodyId | None = None
    CardId: BodyId | None = None
    BinRangeId: BodyId | None = None


class RuleUpdate(RuleSettings):
    """The fields to change (null leaves one as it is). `RuleType` and `Configuration` change
    together. Its scope is the rule's identity: another scope is another rule."""

    model_config = ConfigDict(json_schema_extra={"anyOf": [_NEITHER, *_VARIANTS]})


class RuleResponse(ResponseModel):
    RuleId: int
    Name: str | None
    Description: str | None
    ScopeType: RuleScope
    UserId: int | None
    CardId: int | None
    BinRangeId: int | None
    RuleType: RuleKind
    ResponseCode: str
    Priority: int
    Active: bool
    Shadow: bool
    Configuration: dict[str, Any]
    EffectiveFrom: datetime | None
    EffectiveTo: datetime | None
    CreatedAt: datetime
    UpdatedAt: datetime

    @classmethod
    def of(cls, rule: AuthorizationRule) -> RuleResponse:
        return cls(
            RuleId=rule.id,
            Name=rule.name,
            Description=rule.description,
            ScopeType=RuleScope(rule.scope_type),
            UserId=rule.user_id,
            CardId=rule.card_id,
            BinRangeId=rule.bin_range_id,
            RuleType=RuleKind(rule.rule_type),
            ResponseCode=rule.response_code or "57",
            Priority=rule.priority,
            Active=rule.active,
            Shadow=rule.shadow,
            Configuration=configuration_for_json(rule.configuration),
            EffectiveFrom=rule.effective_from,
            EffectiveTo=rule.effective_to,
            CreatedAt=rule.created_at,
            UpdatedAt=rule.updated_at,
        )


def configuration_for_json(stored: str) -> dict[str, Any]:
    """The stored configuration with its amounts rendered as exact JSON numbers."""
    config: dict[str, Any] = json.loads(stored, parse_float=Decimal)
    if config.get("MaxAmount") is not None:
        config["MaxAmount"] = amount_for_json(Decimal(str(config["MaxAmount"])))
    return config


class RuleList(ResponseModel):
    Rules: list[RuleResponse]


class BinRangeResponse(ResponseModel):
    BinRangeId: int
    Bin: str
    CardTypeIds: list[int]


class BinRangeList(ResponseModel):
    BinRanges: list[BinRangeResponse]

    @classmethod
    def of(cls, ranges: Sequence[Any]) -> BinRangeList:
        return cls(
            BinRanges=[
                BinRangeResponse(BinRangeId=r.id, Bin=r.bin, CardTypeIds=r.card_type_ids)
                for r in ranges
            ]
        )
