"""The `{name:id}` path convertor: a numeric id in a path, as Starlette's `int` reads one,
without the 500 that one gives for a very long id.

Routes such as `/api/v2/cards/{cardId:id}` need a digits-only segment, so that
`/api/v2/cards/physical-card-fees` is not taken for a card. Starlette's `int` convertor turns
the digits into a number while it routes, before authentication and validation; past
Python's limit on digits converted from text (4300) `int()` raises, and the request ended in
an unauthenticated 500. Here digits beyond any id convert to one number above every id
(`MAX_ID + 1`), which each id parameter's upper bound refuses with the same 400 as an id of
thirty digits.
"""

from __future__ import annotations

from starlette.convertors import Convertor, register_url_convertor

from finplat.kit.schemas import MAX_ID

_ABOVE_EVERY_ID = MAX_ID + 1
_ID_DIGITS = len(str(MAX_ID))


class IdConvertor(Convertor[int]):
    regex = "[0-9]+"

    def convert(self, value: str) -> int:
        digits = value.lstrip("0") or "0"
        if len(digits) > _ID_DIGITS:
            return _ABOVE_EVERY_ID
        return int(digits)

    def to_string(self, value: int) -> str:
        return str(value)


register_url_convertor("id", IdConvertor())
