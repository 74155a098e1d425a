from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from finplat.documents.multipart import (
    FORM_DIGITS,
    MULTIPART,
    FormBool,
    document_file_schema,
    request_body,
)
from finplat.kit.fields import CountryCode, IsoDate, SafeText
from finplat.kit.schemas import RequestModel, ResponseModel
from finplat.providers.banking_onboarding.port import InformationRequest

RequestedFeature = Literal["PAYMENTS", "CARDS"]
RANGE_PATTERN = r"^[0-9]{1,12}(-[0-9]{1,12}|\+)$"
CURRENCIES_PATTERN = r"^[A-Z]{3}(,[A-Z]{3}){0,9}$"
# The document's date: its own format name, so the fuzz hooks generate dates of the last
# three months (see tests/fuzz/hooks.py).
RECENT_DATE_FORMAT = "recent-date"
MAX_DOCUMENT_FILES = 10

Range = Annotated[
    str,
    Field(
        pattern=RANGE_PATTERN,
        max_length=25,
        description="A range of whole numbers: `lower-upper` (such as `10000-50000`) or "
        "`lower+` for no upper bound.",
        examples=["10000-50000"],
    ),
]
IssueDate = Annotated[
    IsoDate,
    WithJsonSchema(
        {
            "type": "string",
            "format": RECENT_DATE_FORMAT,
            "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            "description": "Optional (not in the spec's form): the date the proof of address "
            "was issued, YYYY-MM-DD, not in the future and not more than three calendar months "
            "before today (400 `PROOF_OF_ADDRESS_DATE_IN_FUTURE` or `PROOF_OF_ADDRESS_TOO_OLD`). "
            "Without it, the latest date the file records about itself (a PDF's creation or "
            "modification date, an image's EXIF date) must not be older than three months (400 "
            "`PROOF_OF_ADDRESS_TOO_OLD` on `ProofOfAddress`); a file that records no date is "
            "left to the banking provider's review.",
            "examples": ["2026-11-01"],
        }
    ),
]


class PersonalOnboardingForm(BaseModel):
    """The text fields of the personal onboarding form (the file is `ProofOfAddress`)."""

    model_config = ConfigDict(extra="forbid")

    RequestedFeatures: list[RequestedFeature] = Field(
        min_length=1,
        max_length=2,
        description="Repeat the field for each feature wanted. A closed list (`PAYMENTS`, "
        "`CARDS`): the banking provider's two products, each with its own checks.",
    )
    MainPurpose: Annotated[SafeText, Field(max_length=200)] = Field(
        description="What the account is mainly for."
    )
    SourceOfFunds: Annotated[SafeText, Field(max_length=200)]
    DestinationOfFunds: CountryCode = Field(
        description="The country most payments go to (ISO 3166-1 alpha-2)."
    )
    CurrenciesRequired: Annotated[
        str,
        Field(
            pattern=CURRENCIES_PATTERN,
            max_length=39,
            description="ISO 4217 codes, comma-separated, such as `EUR,GBP`.",
            examples=["EUR,GBP"],
        ),
    ]
    AnnualVolume: Range = Field(description="Expected yearly volume, in the account currency.")
    NumberOfPayments: Range = Field(description="Expected payments per month.")
    CardPurposes: Annotated[SafeText, Field(max_length=200)] | None = None
    AtmWithdrawalsRequired: FormBool | None = None
    NumberOfCardsRequired: Annotated[int, Field(ge=0, le=20), FORM_DIGITS] | None = None
    CardAnnualSpend: Range | None = None
    ProofOfAddressDate: IssueDate | None = None


def _nullable_inline(schema: dict[str, Any]) -> None:
    """Optional form fields: the document says "may be left out", not "may be null" (a form
    has no null)."""
    for prop in schema.get("properties", {}).values():
        options = prop.pop("anyOf", None)
        if options:
            kept = [o for o in options if o.get("type") != "null"]
            prop.update(kept[0])
        prop.pop("default", None)
        prop.pop("title", None)


def onboarding_request_body() -> dict[str, Any]:
    body = request_body(
        PersonalOnboardingForm,
        files={
            "ProofOfAddress": document_file_schema(
                "A JPG/JPEG, PNG or PDF file (checked by its content, not its name), not "
                "older than three months: see `ProofOfAddressDate`."
            )
        },
        required_files=["ProofOfAddress"],
    )
    _nullable_inline(body["requestBody"]["content"]["multipart/form-data"]["schema"])
    return body


def documents_request_body() -> dict[str, Any]:
    one = document_file_schema("A PDF, JPEG or PNG file (checked by its content).")
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "Files": {
                "type": "array",
                "items": one,
                "minItems": 1,
                "maxItems": MAX_DOCUMENT_FILES,
                "description": "1 to 10 files, merged in this order into one PDF.",
            },
            "File": {**one, "description": "Legacy: a single file. Send `Files` or `File`."},
        },
        # Exactly one of the two (both would match both branches).
        "oneOf": [{"required": ["Files"]}, {"required": ["File"]}],
    }
    return {"requestBody": {"required": True, "content": {MULTIPART: {"schema": schema}}}}


class OnboardingResult(ResponseModel):
    Success: bool
    Message: str
    CorrelationId: str = Field(description="The banking provider's reference of the application.")
    AccountId: str = Field(description="The banking provider's account id for the user.")


class DocumentUploadResult(ResponseModel):
    Success: bool
    DocumentId: str = Field(description="The banking provider's id of the merged PDF.")
    FileCount: int
    PageCount: int
    Status: str = Field(
        description="The user's banking-provider status after the upload "
        "(`pending_documents` becomes `PENDING`: the checks resume).",
        examples=["PENDING"],
    )


class InformationRequestResponse(ResponseModel):
    RequestId: str
    Question: str
    PersonId: int | None = Field(
        description="The business-application person (`Id` from "
        "`/api/v2/business/onboarding/associated-people`) the question is about, if any."
    )
    CreatedAt: datetime

    @classmethod
    def of(
        cls, request: InformationRequest, person_ids: dict[str, int]
    ) -> InformationRequestResponse:
        return cls(
            RequestId=request.request_id,
            Question=request.question,
            PersonId=person_ids.get(request.person_id) if request.person_id else None,
            CreatedAt=request.created_at,
        )


class OutstandingRequirements(ResponseModel):
    AccountId: str
    Status: str = Field(description="The user's banking-provider status.", examples=["PENDING"])
    DocumentsRequired: bool = Field(
        description="Whether the provider waits for documents (`kyc/bankprov/documents`)."
    )
    Requests: list[InformationRequestResponse] = Field(
        description="Unanswered information requests, oldest first."
    )


class InformationAnswerItem(RequestModel):
    RequestId: Annotated[SafeText, Field(max_length=64)] = Field(
        description="A `RequestId` from `GET .../kyc/bankprov/information`."
    )
    Answer: Annotated[SafeText, Field(max_length=2000)]


class InformationAnswers(RequestModel):
    Answers: list[InformationAnswerItem] = Field(
        min_length=1,
        max_length=50,
        description="Answers to outstanding requests; all are recorded or none. An unknown "
        "`RequestId` is 404; a request already answered differently is 409.",
    )


class AnswersResult(OutstandingRequirements):
    Success: bool
    Answered: int


class DocumentsForm(BaseModel):
    """The documents form has file parts only; any text part is an unknown field."""

    model_config = ConfigDict(extra="forbid")
