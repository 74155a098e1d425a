"""How provider failures surface: technical ones are 503 (retryable), logical ones 4xx."""

from __future__ import annotations

from finplat.errors import ApiError


class ProviderUnavailable(ApiError):
    """The provider could not be reached, timed out, or kept failing technically."""

    status = 503
    code = "PROVIDER_UNAVAILABLE"
    message = "The provider is temporarily unavailable; retry with the same Idempotency-Key."


class ProviderTimeout(ProviderUnavailable):
    code = "PROVIDER_TIMEOUT"
    message = (
        "The provider did not answer in time. Nothing was confirmed; retry the same request "
        "(with the same Idempotency-Key) to complete it."
    )


class ProviderRejected(ApiError):
    """The provider refused the operation for a business reason.

    Keeps the provider's HTTP status (4xx), its field-level `ValidationErrors` and its details.
    """

    status = 400
    code = "PROVIDER_REJECTED"
    message = "The provider refused the operation."


class ProviderTechnicalError(Exception):
    """Raised by adapters for a transient technical failure (connection reset, 5xx).

    Never reaches a client: `commit_then_call` retries idempotent calls and turns what remains
    into `ProviderUnavailable`.
    """

    def __init__(self, provider: str, operation: str, reason: str = "technical failure") -> None:
        self.provider = provider
        self.operation = operation
        self.reason = reason
        super().__init__(f"{provider}.{operation}: {reason}")
