"""Typed API errors and the one renderer of the spec's standard error body.

Every error leaves the service as `{Message, Code, Status, ValidationErrors, Details}`; the
handlers below are the only place that shape is built. The spec's one exception: the legacy
loyalty endpoints (`/api/loyalty-programs/...`) answer problem details (RFC 9457, `type`,
`title`, `detail`, `instance`, `status`, `application/problem+json`), built by
`problem_details` from the same typed errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field


class ErrorBody(BaseModel):
    """The spec's standard error body."""

    model_config = ConfigDict(
        title="Error",
        json_schema_extra={
            "example": {
                "Message": "The request has invalid fields.",
                "Code": "VALIDATION_ERROR",
                "Status": 400,
                "ValidationErrors": {"Email": ["Not a valid email address."]},
                "Details": None,
            }
        },
    )

    Message: str = Field(description="Human-readable explanation, safe to show to an operator.")
    Code: str = Field(description="Stable machine-readable error code, e.g. `USER_NOT_FOUND`.")
    Status: int = Field(description="The HTTP status code of the response.")
    ValidationErrors: dict[str, list[str]] | None = Field(
        default=None, description="Field-level problems keyed by the PascalCase field name."
    )
    Details: str | None = Field(default=None, description="Extra context, such as a request id.")


class ApiError(Exception):
    """Base of every error the API reports on purpose."""

    status: int = 400
    code: str = "BAD_REQUEST"
    message: str = "The request could not be processed."

    def __init__(
        self,
        message: str | None = None,
        *,
        status: int | None = None,
        code: str | None = None,
        validation_errors: Mapping[str, Sequence[str]] | None = None,
        details: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.message = message or type(self).message
        self.status = status or type(self).status
        self.code = code or type(self).code
        self.validation_errors = (
            {k: list(v) for k, v in validation_errors.items()} if validation_errors else None
        )
        self.details = details
        self.headers = dict(headers) if headers else None
        super().__init__(self.message)

    def body(self) -> ErrorBody:
        return ErrorBody(
            Message=self.message,
            Code=self.code,
            Status=self.status,
            ValidationErrors=self.validation_errors,
            Details=self.details,
        )


class ValidationFailed(ApiError):
    status = 400
    code = "VALIDATION_ERROR"
    message = "The request has invalid fields."


class DuplicateField(ValidationFailed):
    """A property sent twice, in the same or another letter case: which value was meant is
    not ours to guess."""

    code = "DUPLICATE_FIELD"
    message = "The request sends a field more than once."


class MalformedJson(ApiError):
    status = 400
    code = "MALFORMED_JSON"
    message = "The request body is not valid JSON."


class InvalidAmount(ApiError):
    status = 400
    code = "INVALID_AMOUNT"
    message = "The amount is not valid."


class Unauthorized(ApiError):
    status = 401
    code = "UNAUTHORIZED"
    message = "A valid API key is required in the x-api-key header."


class NotFound(ApiError):
    status = 404
    code = "NOT_FOUND"
    message = "The requested resource does not exist."


class RouteNotFound(NotFound):
    code = "ROUTE_NOT_FOUND"
    message = "No such route."


class MethodNotAllowed(ApiError):
    status = 405
    code = "METHOD_NOT_ALLOWED"
    message = "The method is not allowed on this route."


class Conflict(ApiError):
    status = 409
    code = "CONFLICT"
    message = "The request conflicts with the current state."


class UnsupportedMediaType(ApiError):
    status = 415
    code = "UNSUPPORTED_MEDIA_TYPE"
    message = "The request body must be application/json."


class ServiceUnavailable(ApiError):
    status = 503
    code = "SERVICE_UNAVAILABLE"
    message = "The service is temporarily unavailable."


class DatabaseBusy(ServiceUnavailable):
    """The database had no room for the request in time; nothing was written by it."""

    message = "The service is busy; retry the request (with the same Idempotency-Key)."

    def __init__(self) -> None:
        super().__init__(headers={"Retry-After": "1"})


class InternalError(ApiError):
    status = 500
    code = "INTERNAL_ERROR"
    message = "An unexpected error occurred. Quote the request id when contacting support."


def error_response(error: ApiError) -> JSONResponse:
    return JSONResponse(
        status_code=error.status,
        content=error.body().model_dump(mode="json"),
        headers=error.headers,
    )


PROBLEM_DETAILS_PREFIXES = ("/api/loyalty-programs/",)
PROBLEM_JSON = "application/problem+json"


def answers_problem_details(path: str) -> bool:
    """The legacy loyalty endpoints answer their errors as problem details (the spec)."""
    return path.startswith(PROBLEM_DETAILS_PREFIXES)


def problem_details(error: ApiError, instance: str) -> dict[str, Any]:
    """RFC 9457: `type` a URN of the error's code, `title` what the error is in general,
    `detail` this occurrence, `instance` the request's path; `code` and, for invalid fields
    or rows, `errors` as extension members."""
    body: dict[str, Any] = {
        "type": f"urn:finplat:problem:{error.code.lower().replace('_', '-')}",
        "title": type(error).message,
        "status": error.status,
        "detail": error.message
        if error.details is None or error.details == error.message
        else f"{error.message} {error.details}",
        "instance": instance,
        "code": error.code,
    }
    if error.validation_errors:
        body["errors"] = error.validation_errors
    return body


def render_error(error: ApiError, path: str) -> tuple[bytes, str]:
    """The error as the body and content type `path` answers with."""
    if answers_problem_details(path):
        return json.dumps(problem_details(error, path)).encode(), PROBLEM_JSON
    return json.dumps(error.body().model_dump(mode="json")).encode(), "application/json"


def error_response_for(error: ApiError, path: str) -> JSONResponse:
    if answers_problem_details(path):
        return JSONResponse(
            status_code=error.status,
            content=problem_details(error, path),
            headers=error.headers,
            media_type=PROBLEM_JSON,
        )
    return error_response(error)


class ProblemDetails(BaseModel):
    """RFC 9457 problem details: the error body of the legacy loyalty endpoints."""

    model_config = ConfigDict(title="ProblemDetails")

    type: str = Field(description="A URN naming the kind of problem.")
    title: str = Field(description="What this kind of problem is.")
    status: int = Field(description="The HTTP status code of the response.")
    detail: str = Field(description="This occurrence of the problem (names the bad row).")
    instance: str = Field(description="The request's path.")
    code: str = Field(description="The stable machine-readable error code.")
    errors: dict[str, list[str]] | None = Field(
        default=None, description="Invalid fields or rows, each with its problems."
    )


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`error_responses` for the legacy loyalty endpoints: problem details."""
    return {
        status: {
            "description": entry["description"],
            "content": {PROBLEM_JSON: {"schema": ProblemDetails.model_json_schema()}},
        }
        for status, entry in error_responses(*statuses).items()
    }


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses=` entries for the errors a route can return.

    Every authenticated route can also answer 401 and 500, so those are always included.
    """
    descriptions = {
        400: "Invalid request: validation or a business rule failed.",
        401: "Missing, unknown or revoked API key, or more than one x-api-key header.",
        403: "The key's company may not make this call (the body's code says why).",
        408: "The request body did not arrive in time.",
        404: "The resource does not exist for this company.",
        409: "Conflict with existing state.",
        413: "Request body too large.",
        415: "Unsupported media type.",
        429: "Rate limit exceeded.",
        500: "Unexpected error; the body carries the request id.",
        502: "A provider failed.",
        503: "The service or a provider is temporarily unavailable.",
    }
    wanted = sorted({*statuses, 401, 500})
    return {s: {"model": ErrorBody, "description": descriptions.get(s, "Error.")} for s in wanted}
