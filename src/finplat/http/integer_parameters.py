"""Integers in paths and query strings are plain digits.

Path and query values arrive as text, and pydantic's lax reading of text as an integer also
takes " 6", "6\\x85" (a Unicode space), "6.0", "+6" and "6_0" (as 60). Request bodies are strict
JSON (`kit.schemas.RequestModel`); parameters are held to the same standard: an integer
parameter is ASCII digits and nothing else, or the request is 400 `VALIDATION_ERROR` like any
invalid field. The route class checks every integer parameter of an endpoint, those of its
dependencies included, so no endpoint can forget it.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin

from fastapi import Request
from fastapi.dependencies.models import Dependant
from fastapi.exceptions import RequestValidationError

NOT_DIGITS = "Must be a whole number written with the digits 0-9 only."


@dataclass(frozen=True, slots=True)
class IntegerParameter:
    location: str  # "path" or "query"
    name: str  # as sent (the alias)


def integer_parameters(dependant: Dependant) -> tuple[IntegerParameter, ...]:
    """The path and query parameters typed `int` (or `int | None`) of an endpoint and of the
    dependencies it uses."""
    found = [
        IntegerParameter(location, field.alias)
        for each in _with_dependencies(dependant)
        for location, fields in (("path", each.path_params), ("query", each.query_params))
        for field in fields
        if _is_integer(field.field_info.annotation)
    ]
    return tuple(dict.fromkeys(found))


def _with_dependencies(dependant: Dependant) -> Iterator[Dependant]:
    yield dependant
    for dependency in dependant.dependencies:
        yield from _with_dependencies(dependency)


def refuse_what_is_not_digits(request: Request, parameters: tuple[IntegerParameter, ...]) -> None:
    """400 `VALIDATION_ERROR` for each integer parameter sent as anything but ASCII digits."""
    errors = [
        {"type": "digits_only", "loc": (p.location, p.name), "msg": NOT_DIGITS, "input": value}
        for p in parameters
        for value in _sent(request, p)
        if not (value.isascii() and value.isdigit())
    ]
    if errors:
        raise RequestValidationError(errors)


def _sent(request: Request, parameter: IntegerParameter) -> list[str]:
    if parameter.location == "path":
        value = request.path_params.get(parameter.name)
        return [value] if isinstance(value, str) else []
    return request.query_params.getlist(parameter.name)


def _is_integer(annotation: Any) -> bool:
    if annotation is int:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        members = set(get_args(annotation)) - {type(None)}
        return members == {int}
    return False
