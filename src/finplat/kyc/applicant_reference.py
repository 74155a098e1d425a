"""The reference a user's applicant carries at the verification provider.

The provider echoes it as `externalUserId` in its callbacks, which lets a review that arrives
before the platform has recorded the applicant be traced to the user it is for.
"""

from __future__ import annotations

from finplat.users.models import User


def reference_of(user: User) -> str:
    return f"{user.company_id}-{user.id}"


def user_id_of(reference: object, *, company_id: int) -> int | None:
    """The id of the company's user the reference names, or None for any other reference."""
    if not isinstance(reference, str):
        return None
    company, _, user = reference.partition("-")
    if company != str(company_id) or not user.isascii() or not user.isdigit():
        return None
    return int(user)
