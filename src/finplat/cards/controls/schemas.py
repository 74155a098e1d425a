"""The wire schemas of a card's controls (the auto-lock body's `enabled` keeps the spec's
lower-case name)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from finplat.cards.status import CardStatus
from finplat.kit.schemas import RequestModel, ResponseModel

PIN_PATTERN = r"^[0-9]{6}$"


class PinBody(RequestModel):
    Pin: str = Field(
        pattern=PIN_PATTERN,
        description="Six digits. Refused with 409 `CARD_PIN_TOO_SIMPLE`: all six digits the "
        "same (000000, 111111, ...) and runs of consecutive digits up or down (123456, "
        "654321, 234567, ...). Never echoed, logged or stored by the platform.",
        json_schema_extra={"writeOnly": True, "format": "password"},
    )


class AutoLockBody(RequestModel):
    enabled: bool = Field(description="Lower-case name, per the spec.")


class CardAutoLockResponseV2(ResponseModel):
    CardId: int
    AutoLockEnabled: bool
    Status: CardStatus
    UpdatedAt: datetime


class PinResponse(ResponseModel):
    CardId: int
    PinSet: bool = Field(description="Always true after success; the PIN itself is never sent.")
