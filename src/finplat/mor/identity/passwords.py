"""Simple users' passwords: the policy a new one must meet, and argon2id hashing.

The policy (400 `VALIDATION_ERROR` naming `Password`, the password never quoted back):
12 to 128 characters, at least one letter (A-Z, a-z) and at least one character that is not
one (the OpenAPI document states both as `minLength`, `maxLength` and `pattern`: a client can
check them before sending), and not the user's email nor its part before the @ (in any
case).
Hashing is argon2id at the cost the settings give (`FINPLAT_MOR_PASSWORD_*`), run off the
event loop: a hash costs tens of milliseconds of CPU on purpose.
"""

from __future__ import annotations

import asyncio
import re

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from finplat.config import Settings
from finplat.errors import ValidationFailed

MIN_LENGTH = 12
MAX_LENGTH = 128
# A letter and a character that is not a letter, in either order, without look-aheads (which
# JSON Schema's dialect of regular expressions does not promise).
MIXED_PATTERN = (
    r"^(?:[\s\S]*[A-Za-z][\s\S]*[^A-Za-z][\s\S]*|[\s\S]*[^A-Za-z][\s\S]*[A-Za-z][\s\S]*)$"
)
_LETTER = re.compile(r"[A-Za-z]")
_NOT_LETTER = re.compile(r"[^A-Za-z]")


def check_policy(password: str, *, email: str) -> None:
    """Refuse a password the policy does not accept (the schema has already bounded its
    length; the pattern is checked here, for a message that says which rule and never quotes
    the password or the expression)."""
    problem: str | None = None
    if password.casefold() in (email.casefold(), email.split("@", 1)[0].casefold()):
        problem = "The password must not be the email address."
    elif not (_LETTER.search(password) and _NOT_LETTER.search(password)):
        problem = (
            "The password must hold at least one letter (A-Z, a-z) and one character that is "
            "not a letter."
        )
    if problem is not None:
        raise ValidationFailed(
            "The password does not meet the password policy.",
            validation_errors={"Password": [problem]},
        )


def hasher(settings: Settings) -> PasswordHasher:
    return PasswordHasher(
        time_cost=settings.mor_password_time_cost,
        memory_cost=settings.mor_password_memory_kib,
        parallelism=settings.mor_password_parallelism,
    )


async def hash_password(settings: Settings, password: str) -> str:
    return await asyncio.to_thread(hasher(settings).hash, password)


async def verify_password(settings: Settings, stored: str, password: str) -> bool:
    """Whether `password` is the one `stored` was made from (a hash of another format or
    cost verifies too; `needs_rehash` says whether to store it again)."""

    def check() -> bool:
        try:
            return hasher(settings).verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False

    return await asyncio.to_thread(check)


def needs_rehash(settings: Settings, stored: str) -> bool:
    return hasher(settings).check_needs_rehash(stored)
