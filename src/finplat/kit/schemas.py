"""Base classes for wire schemas.

Attribute names are the wire names (PascalCase, per the spec), so a schema reads like the spec's
field table and no alias mapping can drift. Requests bind property names case-insensitively
(DESIGN.md, "Request binding, everywhere"): `accountId`, `AccountId` and `ACCOUNTID` are one
field, in every request model and every nested one, while responses and the OpenAPI document
keep the canonical spelling.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from finplat.kit.fields import json_integer

# Identifiers stay within 2^53 - 1 so every client, JavaScript included, holds them exactly;
# larger numbers are refused as invalid input, never sent to the database.
MAX_ID = 2**53 - 1
ID_RANGE = f"Must be an id from 1 to {MAX_ID}."
_ID_DIGITS = len(str(MAX_ID))
ID_RANGE_ERROR = "id_range"


DUPLICATE_FIELD_ERROR = "duplicate_field"


def folded(name: str) -> str:
    """A property name as it is compared: ASCII letters in any case are the same letter.

    Only ASCII is folded (the reference platform's ordinal ignore-case binding does the same
    for every name the API has): `str.lower` would also take the Kelvin sign for a `k`.
    """
    return name.lower() if name.isascii() else name


class FieldNames:
    """The wire names of a model's fields, for binding the names a client sent."""

    def __init__(self, names: Iterable[str]) -> None:
        self.canonical = frozenset(names)
        self.by_folded: dict[str, str] = {}
        for name in sorted(self.canonical):
            clash = self.by_folded.setdefault(folded(name), name)
            assert clash == name, f"{clash} and {name} differ only in case"

    def wire_name(self, sent: str) -> str:
        """The field `sent` names, in its canonical spelling; an unknown name as sent."""
        if sent in self.canonical:
            return sent
        return self.by_folded.get(folded(sent), sent)

    def bind(self, sent: Mapping[str, Any]) -> dict[str, Any]:
        """`sent` with each name that matches a field in another case renamed to the field's
        own. A name that matches no field is kept as sent (the model refuses it as unknown);
        two names of one field are a `duplicate_field` error naming the field."""
        if self.canonical.issuperset(sent):
            return dict(sent)
        bound: dict[str, Any] = {}
        duplicated: list[str] = []
        for name, value in sent.items():
            wire = self.wire_name(name)
            if wire in bound:
                duplicated.append(wire)
            bound[wire] = value
        if duplicated:
            raise PydanticCustomError(
                DUPLICATE_FIELD_ERROR,
                "Sent more than once: property names match case-insensitively.",
                {"fields": sorted(set(duplicated))},
            )
        return bound


@cache
def field_names(model: type[BaseModel]) -> FieldNames:
    return FieldNames(
        field.validation_alias if isinstance(field.validation_alias, str) else (field.alias or name)
        for name, field in model.model_fields.items()
    )


class RequestModel(BaseModel):
    """A request body: unknown fields are refused so a misspelt field never passes silently.

    Property names match case-insensitively (`FieldNames.bind`); values are taken exactly as
    sent, with their JSON types (strict: no "true" for true, no "5" for 5, no silent
    trimming): what the OpenAPI document accepts is what the service accepts.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _a_json_object(cls, data: Any) -> Any:
        # FastAPI validates bodies with from_attributes, which would take any object (a bare
        # number, say) as an instance with every optional field left out.
        if isinstance(data, cls):
            return data
        if not isinstance(data, dict):
            raise ValueError("The body must be a JSON object.")
        return field_names(cls).bind(data)


class ResponseModel(BaseModel):
    model_config = ConfigDict(from_attributes=True)


def _in_range(number: int) -> int:
    if not 1 <= number <= MAX_ID:
        raise PydanticCustomError(ID_RANGE_ERROR, ID_RANGE)
    return number


def _body_id(value: Any) -> int:
    return _in_range(json_integer(value))


def _parameter_id(value: Any) -> Any:
    """A path or query id, as text (or as the `{name:id}` convertor's number): out of range is
    the same error as in a body, however many digits it has. Anything but digits is left to
    the integer validation (and the route class's digits-only check)."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        digits = value.lstrip("0") or "0"
        _in_range(int(digits) if len(digits) <= _ID_DIGITS else MAX_ID + 1)
    elif isinstance(value, int) and not isinstance(value, bool):
        _in_range(value)
    return value


BodyId = Annotated[int, Field(ge=1, le=MAX_ID), BeforeValidator(_body_id)]
"""An id in a JSON body: a JSON integer from 1 to `MAX_ID` (never 1.0, "1" or true)."""
PARAMETER_ID = BeforeValidator(_parameter_id)
"""Put after `Path(ge=1, le=MAX_ID, ...)` or `Query(...)`: the one id rule for parameters."""

UserIdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="The user's `Id`."), PARAMETER_ID]
TierIdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="The tier's `Id`."), PARAMETER_ID]
UserIdQuery = Annotated[
    int, Query(ge=1, le=MAX_ID, description="The target user's `Id`."), PARAMETER_ID
]
