"""Reading a JSON request body: exact numbers, UTF-8 only, and no key given twice.

Ambiguous input is refused, never guessed: `{"Value": 100000, "Value": 5}` means whatever
the last parser in the chain decides (Python keeps the last value, some proxies and WAFs the
first), so a key that appears twice in one object is 400 `DUPLICATE_FIELD`. A body that is
not UTF-8 (RFC 8259 section 8.1: JSON exchanged between systems is UTF-8; Python would guess
UTF-16 or UTF-32 from the first bytes) and the non-JSON literals `NaN`, `Infinity` and
`-Infinity` are 400 `MALFORMED_JSON`. Every number with a fraction or an exponent becomes a
`Decimal` with exactly the digits sent (a float would round a money amount silently);
integers stay `int`.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from finplat.errors import DuplicateField, MalformedJson


class _Duplicate(ValueError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _NotJson(ValueError):
    pass


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise _Duplicate(name)
            seen.add(name)
    return document


def _constant(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON value.")


# Built once: `json.loads` with options builds a decoder (and its scanner) on every call.
DECODER = json.JSONDecoder(parse_float=Decimal, parse_constant=_constant, object_pairs_hook=_object)


def duplicate_field(name: str) -> DuplicateField:
    return DuplicateField(
        f"The field '{name}' appears more than once in the request body.",
        validation_errors={name: ["Given more than once."]},
    )


def parse(body: bytes) -> Any:
    """The JSON document in `body`; `MalformedJson` or `DuplicateField` when it is not one
    unambiguous UTF-8 JSON document."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedJson("The request body is not UTF-8 text.") from None
    try:
        return DECODER.decode(text)
    except _Duplicate as duplicate:
        raise duplicate_field(duplicate.name) from None
    except _NotJson as not_json:
        raise MalformedJson(details=str(not_json)) from None
    except json.JSONDecodeError as error:
        raise MalformedJson(details=f"{error.msg} at character {error.pos}.") from None
    except ValueError:  # an integer past Python's 4,300 digits (`sys.int_info`)
        raise MalformedJson(details="A number too long to read.") from None
    except RecursionError:
        raise MalformedJson(details="The document is nested too deeply.") from None
