"""Base classes for wire schemas.

Attribute names are the wire names (PascalCase, per the spec), so a schema reads like the spec's
field table and no alias mapping can drift.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, model_validator

# Identifiers stay within 2^53 - 1 so every client, JavaScript included, holds them exactly;
# larger numbers are refused as invalid input, never sent to the database.
MAX_ID = 2**53 - 1


class RequestModel(BaseModel):
    """A request body: unknown fields are refused so a misspelt field never passes silently.

    Values are taken exactly as sent, with their JSON types (strict: no "true" for true, no
    "5" for 5, no silent trimming): what the OpenAPI document accepts is what the service
    accepts.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _a_json_object(cls, data: Any) -> Any:
        # FastAPI validates bodies with from_attributes, which would take any object (a bare
        # number, say) as an instance with every optional field left out.
        if not isinstance(data, dict | cls):
            raise ValueError("The body must be a JSON object.")
        return data


class ResponseModel(BaseModel):
    model_config = ConfigDict(from_attributes=True)


UserIdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="The user's `Id`.")]
TierIdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="The tier's `Id`.")]
UserIdQuery = Annotated[int, Query(ge=1, le=MAX_ID, description="The target user's `Id`.")]
