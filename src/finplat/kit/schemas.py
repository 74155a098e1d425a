"""Base classes for wire schemas.

Attribute names are the wire names (PascalCase, per the spec), so a schema reads like the spec's
field table and no alias mapping can drift.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path
from pydantic import BaseModel, ConfigDict

# Identifiers are 64-bit; larger numbers are refused as invalid input, not sent to the database.
MAX_ID = 2**63 - 1


class RequestModel(BaseModel):
    """A request body: unknown fields are refused so a misspelt field never passes silently."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ResponseModel(BaseModel):
    model_config = ConfigDict(from_attributes=True)


UserIdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="The user's `Id`.")]
TierIdPath = Annotated[int, Path(ge=1, le=MAX_ID, description="The tier's `Id`.")]
