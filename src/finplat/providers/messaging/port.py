"""Sending a user a one-time code by email (a voucher redemption's confirmation)."""

from __future__ import annotations

from typing import Protocol


class CodeMailer(Protocol):
    """A provider that emails a one-time code to a user.

    `reference` names what the code confirms (one code per reference: a repeated call with
    the same reference and code sends nothing new).
    """

    name: str

    async def send_code(
        self, *, company_id: int, reference: str, email: str, code: str
    ) -> None: ...
