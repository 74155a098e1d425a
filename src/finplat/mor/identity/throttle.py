"""Sign-in failures of MOR simple users, counted per email (within the company) and per
client address: past either limit, `POST /api/v2/mor/public/auth/token` answers 429
`SIGN_IN_THROTTLED` with `Retry-After`, before the password is even looked at, whether or not
the password would have been right. The counts are `auth.failure_throttle`'s windows (in
memory per process, or shared through Redis with `FINPLAT_REDIS_URL`), under keys of their
own."""

from __future__ import annotations

from finplat.auth.failure_throttle import FailedAuthThrottle
from finplat.config import Settings
from finplat.errors import ApiError


class SignInThrottled(ApiError):
    status = 429
    code = "SIGN_IN_THROTTLED"
    message = "Too many failed sign-ins; retry after the time in Retry-After."


class SignInThrottle:
    def __init__(self, settings: Settings) -> None:
        self.per_email = FailedAuthThrottle(
            settings.mor_sign_in_limit_per_email, redis_url=settings.redis_url
        )
        self.per_address = FailedAuthThrottle(
            settings.mor_sign_in_limit_per_address, redis_url=settings.redis_url
        )

    @staticmethod
    def _keys(company_id: int, email_key: str, address: str) -> tuple[str, str]:
        return f"mor-sign-in:{company_id}:{email_key}", f"mor-sign-in-address:{address}"

    async def check(self, company_id: int, email_key: str, address: str) -> None:
        """Raise 429 while the email or the address has spent its failures."""
        email, place = self._keys(company_id, email_key, address)
        for refusal in (
            await self.per_email.refusal(email),
            await self.per_address.refusal(place),
        ):
            if refusal is not None:
                raise SignInThrottled(headers=refusal.headers)

    async def count_failure(self, company_id: int, email_key: str, address: str) -> None:
        email, place = self._keys(company_id, email_key, address)
        await self.per_email.count_failure(email)
        await self.per_address.count_failure(place)
