"""Multipart form requests: read the text fields into a model, collect the file parts, and
describe both in the OpenAPI document.

FastAPI's own form parameters cannot say "`Files` or `File`, not both" in the document nor
report errors with our field names, so multipart endpoints read the form here: the model
validates the text fields (form values are text, so booleans are exactly `true`/`false` and
integers plain digits), files are checked by their bytes by the caller. Part names match
case-insensitively, as JSON property names do (`kit.schemas.FieldNames`): `proofofaddress` is
the `ProofOfAddress` file and `mainPurpose` the `MainPurpose` field.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, BeforeValidator, ValidationError, WithJsonSchema
from starlette.datastructures import UploadFile
from starlette.formparsers import MultiPartException

from finplat.errors import DuplicateField, UnsupportedMediaType, ValidationFailed
from finplat.kit.schemas import field_names, folded

ModelT = TypeVar("ModelT", bound=BaseModel)

MULTIPART = "multipart/form-data"
# The format name the document gives upload fields: a PDF, JPEG or PNG file (the fuzz hooks
# generate real ones). `contentMediaType` marks the part as a file (OpenAPI 3.1).
DOCUMENT_FORMAT = "pdf-jpeg-png"
MAX_PARTS = 64


def document_file_schema(description: str) -> dict[str, Any]:
    return {
        "type": "string",
        "format": DOCUMENT_FORMAT,
        "contentMediaType": "application/octet-stream",
        "description": description,
    }


class NotMultipart(UnsupportedMediaType):
    code = "UNSUPPORTED_MEDIA_TYPE"
    message = "The request body must be multipart/form-data."


class MalformedMultipart(ValidationFailed):
    code = "MALFORMED_MULTIPART"
    message = "The multipart body could not be read."


@dataclass(frozen=True)
class UploadedFile:
    field: str
    filename: str
    data: bytes


@dataclass(frozen=True)
class MultipartForm:
    text: dict[str, list[str]]
    files: dict[str, list[UploadedFile]]


async def read_form(request: Request, *, file_fields: Collection[str]) -> MultipartForm:
    """The parts of a multipart body, text and files apart. A text field sent as a file (or a
    file field sent as text) is a validation error."""
    content_type = request.headers.get("content-type", "").lower()
    if not content_type.startswith(MULTIPART):
        raise NotMultipart()
    try:
        form = await request.form(max_files=MAX_PARTS, max_fields=MAX_PARTS)
    except MultiPartException as exc:
        raise MalformedMultipart(details=exc.message) from None
    text: dict[str, list[str]] = {}
    files: dict[str, list[UploadedFile]] = {}
    problems: dict[str, list[str]] = {}
    file_names = {folded(name): name for name in file_fields}
    for sent, value in form.multi_items():
        file_field = file_names.get(folded(sent))
        if isinstance(value, UploadFile):
            if file_field is None:
                problems.setdefault(sent, []).append("Must be a text field, not a file.")
                continue
            data = await value.read()
            files.setdefault(file_field, []).append(
                UploadedFile(file_field, value.filename or file_field, data)
            )
        elif file_field is not None:
            problems.setdefault(file_field, []).append("Must be a file part (with a filename).")
        else:
            text.setdefault(sent, []).append(value)
    if problems:
        raise ValidationFailed(validation_errors=problems)
    return MultipartForm(text, files)


def parse_fields(
    model: type[ModelT], form: MultipartForm, *, required_files: Collection[str] = ()
) -> ModelT:
    """Validate the text fields with `model`: list-typed fields take every value of a
    repeated field, other fields exactly one (sent twice, in any letter case, is 400
    `DUPLICATE_FIELD`). Missing `required_files` are reported with the fields' problems."""
    names = field_names(model)
    text: dict[str, list[str]] = {}
    for sent, values in form.text.items():
        text.setdefault(names.wire_name(sent), []).extend(values)
    repeated = {
        name
        for name, field in model.model_fields.items()
        if getattr(field.annotation, "__origin__", None) is list or "list[" in str(field.annotation)
    }
    duplicated = {
        name: ["Send this field once."]
        for name, values in text.items()
        if len(values) > 1 and name not in repeated
    }
    if duplicated:
        raise DuplicateField(validation_errors=duplicated)
    problems: dict[str, list[str]] = {
        name: ["Field required."] for name in required_files if not form.files.get(name)
    }
    if problems:
        raise ValidationFailed(validation_errors=problems)
    data: dict[str, Any] = {
        name: values if name in repeated else values[0] for name, values in text.items()
    }
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ValidationFailed(validation_errors=_field_errors(exc)) from None


def _field_errors(exc: ValidationError) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        key = ".".join(loc) if loc else "Body"
        if error["type"] == "extra_forbidden":
            message = "Unknown field."
        elif error["type"] == "missing":
            message = "Field required."
        else:
            message = str(error["msg"]).removeprefix("Value error, ")
        fields.setdefault(key, []).append(message)
    return fields


def request_body(
    model: type[BaseModel],
    *,
    files: Mapping[str, dict[str, Any]],
    required_files: Collection[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`openapi_extra` for a multipart operation: the model's fields plus the file parts."""
    schema = model.model_json_schema()
    assert "$defs" not in schema, "form models must inline their types"
    schema.pop("title", None)
    schema["properties"] = {**schema.get("properties", {}), **files}
    required = [*schema.get("required", []), *required_files]
    if required:
        schema["required"] = required
    schema.update(extra or {})
    return {"requestBody": {"required": True, "content": {MULTIPART: {"schema": schema}}}}


def _form_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value == "true":
        return True
    if value == "false":
        return False
    raise ValueError("Must be `true` or `false`.")


def _form_int(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 15:
        return int(value)
    raise ValueError("Must be a whole number written in digits.")


FormBool = Annotated[bool, BeforeValidator(_form_bool), WithJsonSchema({"type": "boolean"})]
"""A boolean form field: exactly `true` or `false`."""

FORM_DIGITS = BeforeValidator(_form_int)
"""For an integer form field, after its `Field(ge=, le=)`: plain digits only."""


def single_file(files: Mapping[str, list[UploadedFile]], name: str) -> UploadedFile:
    """The one file sent as `name` (400 when missing or repeated)."""
    sent = files.get(name, [])
    if not sent:
        raise ValidationFailed(validation_errors={name: ["Field required."]})
    if len(sent) > 1:
        raise ValidationFailed(validation_errors={name: ["Send one file."]})
    return sent[0]
