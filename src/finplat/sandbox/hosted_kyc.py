"""The sandbox verification provider's hosted page: where an applicant opens the KYC link.

`POST /api/v2/users/{userId}/sumsub/kyc-url` answers `Url` = `{base}/sandbox/identity/verify#
token=<access token>`. The token travels in the fragment (browsers never send it, so it stays
out of access logs); the page's script moves it into a hidden form field and removes it from the
address bar. No API key: the single-use, short-lived token is the page's only authority.

The applicant picks a document type, enters a document number and, this being the sandbox,
the reviewers' decision; the provider then sends its `applicant.reviewed` callback, which the
background job delivers through the inbound path like any real provider callback.

Everything is answered as HTML (error pages too: a person reads them), with a strict
Content-Security-Policy: no inline script, no external assets.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Mapping
from typing import Annotated, Any, Literal
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from pydantic import Field, ValidationError

from finplat.http.indexed_router import IndexedRouter
from finplat.http.routing import CurrentProviders
from finplat.kit.schemas import RequestModel
from finplat.kyc.statuses import Outcome
from finplat.providers.identity.sandbox.adapter import (
    HOSTED_PAGE_PATH,
    InvalidAccessToken,
    SandboxIdentityVerification,
)
from finplat.sandbox.kyc import REVIEW_OF_OUTCOME

SCRIPT_PATH = f"{HOSTED_PAGE_PATH}.js"
FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"
TOKEN_PATTERN = r"^[A-Za-z0-9_-]+$"  # noqa: S105 (a shape, not a secret)
DOCUMENT_NUMBER_PATTERN = r"^[A-Za-z0-9-]+$"
MAX_FORM_FIELDS = 8

DOCUMENT_TYPES = {
    "PASSPORT": "Passport",
    "ID_CARD": "National identity card",
    "DRIVERS_LICENSE": "Driving licence",
}
OUTCOMES = {
    Outcome.APPROVED: "Approve",
    Outcome.REJECTED: "Reject",
    Outcome.RESUBMISSION: "Ask the applicant to resubmit",
}
FIELD_LABELS = {
    "Token": "Verification link",
    "DocumentType": "Document type",
    "DocumentNumber": "Document number",
    "Outcome": "Sandbox decision",
}


class HostedVerificationForm(RequestModel):
    """The hosted page's form, as the browser posts it."""

    Token: Annotated[
        str,
        Field(
            min_length=1,
            max_length=200,
            pattern=TOKEN_PATTERN,
            description="The access token from the link's fragment (`#token=...`); the page's "
            "script fills it in. Single use.",
        ),
    ]
    DocumentType: Literal["PASSPORT", "ID_CARD", "DRIVERS_LICENSE"] = Field(
        description="The identity document the applicant presents."
    )
    DocumentNumber: Annotated[
        str,
        Field(
            min_length=4,
            max_length=30,
            pattern=DOCUMENT_NUMBER_PATTERN,
            description="The document's number: 4 to 30 letters, digits or hyphens. Checked, "
            "never stored or shown.",
        ),
    ]
    Outcome: Literal["APPROVED", "REJECTED", "RESUBMISSION"] = Field(
        default="APPROVED",
        description="Sandbox only: what the provider's reviewers decide. RESUBMISSION asks the "
        "applicant to submit again.",
    )


FORM_SCHEMA: dict[str, Any] = {
    **HostedVerificationForm.model_json_schema(),
    "additionalProperties": False,
}

# Styles are inline and allowed by their hash, so the policy needs no 'unsafe-inline'.
STYLE = """
body{font-family:system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;
line-height:1.5;color:#1a1a1a;background:#fff}
h1{font-size:1.5rem}label,legend{font-weight:600;display:block;margin-top:1rem}
select,input[type=text]{font-size:1rem;padding:.4rem;width:100%;box-sizing:border-box}
fieldset{border:2px dashed #b35900;margin-top:1.5rem;padding:.5rem 1rem 1rem}
fieldset label{font-weight:400;margin-top:.25rem}.hint{color:#444;font-size:.9rem;margin:.2rem 0}
button{margin-top:1.5rem;font-size:1rem;padding:.6rem 1.2rem;background:#0b57d0;color:#fff;
border:0;border-radius:4px;cursor:pointer}button:disabled{background:#777;cursor:not-allowed}
button:focus,input:focus,select:focus{outline:3px solid #f9a825;outline-offset:2px}
.alert{border-left:4px solid #b3261e;padding:.5rem 1rem;background:#fdecea}
.sandbox{background:#fff4e5;border-left:4px solid #b35900;padding:.5rem 1rem}
"""
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; "
    "script-src 'self'; "
    f"style-src 'sha256-{_STYLE_HASH}'; "
    "form-action 'self'; "
    "base-uri 'none'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}

# Reads the token from the fragment into the form and removes the fragment from the address bar
# (and from the history entry), so it is not left on screen, in history or in bookmarks.
SCRIPT = """\
"use strict";
(function () {
  var field = document.getElementById("token");
  var missing = document.getElementById("no-token");
  var submit = document.getElementById("submit");
  function takeToken() {
    var token = new URLSearchParams(window.location.hash.slice(1)).get("token");
    if (window.location.hash) {
      window.history.replaceState(null, "", window.location.pathname + window.location.search);
    }
    if (token) {
      field.value = token;
    }
    missing.hidden = Boolean(field.value);
    submit.disabled = !field.value;
  }
  // The link may also be opened over this page (a fragment change does not reload it).
  window.addEventListener("hashchange", takeToken);
  takeToken();
})();
"""


def _document(title: str, body: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title)} · Sandbox identity verification</title>\n"
        f"<style>{STYLE}</style>\n</head>\n<body>\n<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def _respond(document: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(document, status_code=status, headers=SECURITY_HEADERS)


def _options(choices: Mapping[str, str]) -> str:
    return "".join(
        f'<option value="{value}">{html.escape(label)}</option>' for value, label in choices.items()
    )


def _outcome_choices() -> str:
    return "".join(
        f'<label><input type="radio" name="Outcome" value="{outcome.value}"'
        f"{' checked' if outcome is Outcome.APPROVED else ''}> {html.escape(label)}</label>"
        for outcome, label in OUTCOMES.items()
    )


FORM_PAGE = _document(
    "Verify your identity",
    f"""<h1>Verify your identity</h1>
<p class="sandbox"><strong>Sandbox.</strong> This page simulates the identity-verification
provider. No real documents are checked.</p>
<p id="no-token" class="alert" role="alert" hidden>Open this page with the complete
verification link you were given: this address is missing its token.</p>
<form method="post" action="verify">
<input type="hidden" id="token" name="Token" value="">
<label for="document-type">Document type</label>
<select id="document-type" name="DocumentType" required>{_options(DOCUMENT_TYPES)}</select>
<label for="document-number">Document number</label>
<p class="hint" id="document-number-hint">4 to 30 letters, digits or hyphens, as printed on
the document.</p>
<input type="text" id="document-number" name="DocumentNumber" required minlength="4"
maxlength="30" pattern="[A-Za-z0-9\\-]+" autocomplete="off" spellcheck="false"
aria-describedby="document-number-hint">
<fieldset>
<legend>Sandbox decision</legend>
<p class="hint">Sandbox only: choose what the provider's reviewers decide.</p>
{_outcome_choices()}
</fieldset>
<button type="submit" id="submit">Submit documents</button>
</form>
<script src="verify.js"></script>""",
)

SUBMITTED_PAGE = _document(
    "Documents submitted",
    """<h1>Documents submitted</h1>
<p role="status">Thank you. Your documents were submitted for review; the result will follow
shortly. You can close this page.</p>""",
)


def _error(title: str, message: str, problems: list[str] | None = None) -> str:
    items = "".join(f"<li>{html.escape(p)}</li>" for p in problems or [])
    listing = f"\n<ul>{items}</ul>" if items else ""
    return _document(
        title,
        f'<h1>{html.escape(title)}</h1>\n<div class="alert" role="alert">'
        f"<p>{html.escape(message)}</p>{listing}</div>",
    )


LINK_INVALID_PAGE = _error(
    "Link not valid",
    "This verification link is unknown, has expired or was already used. Ask for a new link.",
)
UNSUPPORTED_PAGE = _error(
    "Form not understood", "The form must be sent as application/x-www-form-urlencoded."
)
UNAVAILABLE_PAGE = _error(
    "Verification unavailable", "The sandbox verification provider is not available."
)


class FormRejected(Exception):
    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def _read_form(body: bytes) -> HostedVerificationForm:
    """Parse a url-encoded body strictly: UTF-8, no repeated field, no unknown field."""
    try:
        pairs = parse_qsl(
            body.decode("utf-8"),
            keep_blank_values=True,
            strict_parsing=bool(body),
            errors="strict",
            max_num_fields=MAX_FORM_FIELDS,
        )
    except ValueError:  # UnicodeDecodeError included
        raise FormRejected(["The form could not be read."]) from None
    fields: dict[str, str] = {}
    problems: list[str] = []
    for name, value in pairs:
        if name in fields:
            problems.append(f"{FIELD_LABELS.get(name, 'A field')} was given more than once.")
        fields[name] = value
    if problems:
        raise FormRejected(problems)
    if not fields.get("Token"):
        raise FormRejected(
            [
                "The verification link's token is missing: open this page from the link you "
                "were given, in a browser with JavaScript enabled."
            ]
        )
    try:
        return HostedVerificationForm.model_validate(fields)
    except ValidationError as exc:
        raise FormRejected(_problems(exc)) from None


def _problems(exc: ValidationError) -> list[str]:
    # The values are never repeated back: the token is a credential, the number personal data.
    found = []
    for error in exc.errors():
        name = str(error["loc"][0]) if error["loc"] else ""
        if error["type"] == "extra_forbidden":
            found.append("The form has a field this page does not ask for.")
        elif name == "Token":
            found.append("The verification link is malformed: open the link you were given.")
        elif error["type"] == "missing":
            found.append(f"{FIELD_LABELS.get(name, name)} is required.")
        elif name == "DocumentType":
            found.append("Document type must be a passport, an identity card or a driving licence.")
        elif name == "DocumentNumber":
            found.append("Document number must be 4 to 30 letters, digits or hyphens.")
        elif name == "Outcome":
            found.append("Sandbox decision must be approve, reject or ask to resubmit.")
        else:
            found.append("The form is not valid.")
    return list(dict.fromkeys(found))


def _html(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"text/html": {"schema": {"type": "string"}}},
        "headers": {
            name: {"description": f"Always `{value}`.", "schema": {"type": "string"}}
            for name, value in SECURITY_HEADERS.items()
            if name != "Content-Security-Policy"
        }
        | {
            "Content-Security-Policy": {
                "description": "Scripts from this origin only, no inline script, no external "
                "assets, forms post here only.",
                "schema": {"type": "string"},
            }
        },
    }


router = IndexedRouter(tags=["Sandbox"])


@router.get(
    HOSTED_PAGE_PATH,
    response_class=HTMLResponse,
    summary="Hosted verification page (sandbox)",
    description="The page `Url` from `POST /api/v2/users/{userId}/sumsub/kyc-url` opens. Opened "
    "by the applicant in a browser, without an API key: the access token in the link's "
    "fragment (`#token=...`) is its authority. Its script moves the token into the form and "
    "removes it from the address bar.",
    responses={200: _html("The verification form.")},
)
async def hosted_verification_page() -> HTMLResponse:
    return _respond(FORM_PAGE)


@router.get(
    SCRIPT_PATH,
    summary="Hosted verification page script (sandbox)",
    description="The page's only script, served separately so the page's Content-Security-"
    "Policy can forbid inline scripts.",
    responses={
        200: {
            "description": "The script.",
            "content": {"text/javascript": {"schema": {"type": "string"}}},
        }
    },
    response_class=Response,
)
async def hosted_verification_script() -> Response:
    return Response(SCRIPT, media_type="text/javascript; charset=utf-8", headers=SECURITY_HEADERS)


@router.post(
    HOSTED_PAGE_PATH,
    response_class=HTMLResponse,
    summary="Submit the hosted verification form (sandbox)",
    description="The applicant's submission. Uses the access token (single use); the sandbox "
    "provider then decides as `Outcome` says and sends its `applicant.reviewed` callback, "
    "which moves the user's `KycStatus` to APPROVED, REJECTED or RESUBMISSION_REQUIRED once "
    "delivered. An unknown, expired or used token is 404; an invalid form 400; every answer "
    "is an HTML page.",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {FORM_MEDIA_TYPE: {"schema": FORM_SCHEMA}},
        }
    },
    responses={
        200: _html("The documents were submitted; the result follows."),
        400: _html("The form is invalid (each problem is listed; no value is repeated)."),
        404: _html("The verification link is unknown, expired or already used."),
        415: _html("The body is not application/x-www-form-urlencoded."),
        503: _html("The identity provider is not the sandbox."),
    },
)
async def submit_hosted_verification(request: Request, providers: CurrentProviders) -> HTMLResponse:
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type != FORM_MEDIA_TYPE:
        return _respond(UNSUPPORTED_PAGE, 415)
    try:
        form = _read_form(await request.body())
    except FormRejected as exc:
        return _respond(
            _error(
                "Please correct the form",
                "The form could not be accepted. Open your verification link again to retry: it "
                "stays valid until it expires.",
                exc.problems,
            ),
            400,
        )
    identity = providers.identity
    if not isinstance(identity, SandboxIdentityVerification):
        return _respond(UNAVAILABLE_PAGE, 503)
    answer, reject_type = REVIEW_OF_OUTCOME[Outcome(form.Outcome)]
    try:
        await identity.submit_hosted(
            token=form.Token,
            document_type=form.DocumentType,
            answer=answer,
            reject_type=reject_type,
        )
    except InvalidAccessToken:
        return _respond(LINK_INVALID_PAGE, 404)
    return _respond(SUBMITTED_PAGE)
