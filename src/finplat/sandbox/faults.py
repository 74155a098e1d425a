from __future__ import annotations

from typing import Annotated

from pydantic import (
    AfterValidator,
    ConfigDict,
    Field,
    JsonValue,
    WithJsonSchema,
    model_validator,
)

from finplat.kit.fields import WholeNumber
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.providers.names import ExternalProvider
from finplat.providers.sandbox.faults import FaultMode, SandboxFault
from finplat.providers.sandbox.operations import OPERATIONS, ProviderOperation

# The refusals a provider answers with. (Its 401, 408 and 429 are technical failures for the
# platform — its own credentials, a timeout, a rate limit — which other modes simulate.)
PROVIDER_REFUSAL_STATUSES = (400, 403, 404, 409, 422)


def _refusal_status(value: int) -> int:
    if value not in PROVIDER_REFUSAL_STATUSES:
        raise ValueError(f"Must be one of {', '.join(map(str, PROVIDER_REFUSAL_STATUSES))}.")
    return value


ErrorStatus = Annotated[
    WholeNumber,
    AfterValidator(_refusal_status),
    WithJsonSchema({"type": "integer", "enum": list(PROVIDER_REFUSAL_STATUSES)}),
]


def _operations_by_provider() -> list[JsonValue]:
    return [
        {
            "properties": {
                "Provider": {"const": provider.value},
                "Operation": {"enum": list[JsonValue](operations)},
            }
        }
        for provider, operations in OPERATIONS.items()
        if operations
    ]


class FaultRequest(RequestModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "Provider": "bankprov",
                "Operation": "submit_personal_onboarding",
                "Mode": "timeout",
                "Count": 1,
            },
            # Each provider has its own operations.
            "anyOf": _operations_by_provider(),
        }
    )

    Provider: Annotated[ExternalProvider, Field(strict=False)]
    Operation: Annotated[ProviderOperation, Field(strict=False)] = Field(
        description="The provider operation to disturb."
    )
    Mode: Annotated[FaultMode, Field(strict=False)] = Field(
        description="`error`: the provider refuses (4xx, `HttpStatus`, default 422). "
        "`timeout`: it does the work but never answers (the caller times out: 503). "
        "`transient`: a technical failure before any work (idempotent calls are retried). "
        "`pending`: it accepts and decides later."
    )
    Count: WholeNumber = Field(ge=1, le=1000, description="How many calls the fault applies to.")
    HttpStatus: ErrorStatus | None = Field(
        default=None, description="The provider's status for `error` mode."
    )

    @model_validator(mode="after")
    def _operation_of_provider(self) -> FaultRequest:
        if self.Operation.value not in OPERATIONS[self.Provider]:
            known = ", ".join(OPERATIONS[self.Provider]) or "none"
            raise ValueError(
                f"{self.Provider.value} has no operation {self.Operation.value!r}: {known}."
            )
        return self


class FaultResponse(ResponseModel):
    Provider: ExternalProvider
    Operation: str
    Mode: FaultMode
    Remaining: int
    HttpStatus: int | None

    @classmethod
    def of(cls, fault: SandboxFault) -> FaultResponse:
        return cls(
            Provider=ExternalProvider(fault.provider),
            Operation=fault.operation,
            Mode=FaultMode(fault.mode),
            Remaining=fault.remaining,
            HttpStatus=fault.http_status,
        )


class FaultList(ResponseModel):
    Faults: list[FaultResponse]


class FaultsCleared(ResponseModel):
    Cleared: int
