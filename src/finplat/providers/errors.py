"""How provider failures surface: technical ones are 502/503 (retryable), logical ones 4xx."""

from __future__ import annotations

from finplat.errors import ApiError


class ProviderUnavailable(ApiError):
    """The provider could not be reached or answered with a technical error."""

    status = 503
    code = "PROVIDER_UNAVAILABLE"
    message = "The provider is temporarily unavailable; retry with the same Idempotency-Key."


class ProviderRejected(ApiError):
    """The provider refused the operation for a business reason."""

    status = 400
    code = "PROVIDER_REJECTED"
    message = "The provider refused the operation."
