"""The sandbox card provider's secure widget: the only place the full card number, expiry and
CVV appear.

`GET /api/v2/cards/{cardId}/widget` answers `Url` = `{base}/sandbox/cards/widget#token=...`.
The token travels in the fragment (browsers never send it, so no access log keeps it); the
page's script takes it out of the address bar and redeems it once with
`POST /sandbox/cards/widget/reveal`, then shows the details. The token is single use and
expires after 60 seconds: a second use or a late one is refused. No API key: the token is the
page's only authority. Strict Content-Security-Policy: no inline script, no external assets.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Annotated, Any

from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import Field

from finplat.http.indexed_router import IndexedRouter
from finplat.http.routing import CurrentProviders
from finplat.kit.schemas import RequestModel
from finplat.providers.cards.sandbox.adapter import (
    WIDGET_PATH,
    InvalidWidgetToken,
    SandboxCardProgram,
)

SCRIPT_PATH = f"{WIDGET_PATH}.js"
REVEAL_PATH = f"{WIDGET_PATH}/reveal"

STYLE = """
body{font-family:system-ui,sans-serif;max-width:26rem;margin:2rem auto;padding:0 1rem;
color:#1a1a1a;background:#fff}h1{font-size:1.25rem}
.card{border-radius:12px;background:#12315e;color:#fff;padding:1.25rem;margin-top:1rem}
dt{font-size:.8rem;opacity:.8;margin-top:.6rem}dd{margin:0;font-size:1.2rem;
font-family:ui-monospace,monospace;letter-spacing:.08em}
.alert{border-left:4px solid #b3261e;padding:.5rem 1rem;background:#fdecea}
"""
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; connect-src 'self'; "
        f"style-src 'sha256-{_STYLE_HASH}'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors *"
    ),
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}

PAGE = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Card details · Sandbox card provider</title>
<style>{STYLE}</style>
</head>
<body>
<main>
<h1>Your card details</h1>
<p id="refused" class="alert" role="alert" hidden>This link is not valid: it is unknown, has
expired or was already used. Ask for a new one.</p>
<div id="card" class="card" hidden>
<dl>
<dt>Card number</dt><dd id="number"></dd>
<dt>Expires</dt><dd id="expiry"></dd>
<dt>CVV</dt><dd id="cvv"></dd>
</dl>
</div>
</main>
<script src="widget.js"></script>
</body>
</html>
"""

SCRIPT = """\
"use strict";
(function () {
  var token = new URLSearchParams(window.location.hash.slice(1)).get("token");
  if (window.location.hash) {
    window.history.replaceState(null, "", window.location.pathname);
  }
  function refuse() { document.getElementById("refused").hidden = false; }
  if (!token) { refuse(); return; }
  fetch("widget/reveal", {
    method: "POST",
    headers: {"Content-Type": "application/json"},
    body: JSON.stringify({Token: token}),
    cache: "no-store",
    credentials: "omit"
  }).then(function (response) {
    if (!response.ok) { throw new Error("refused"); }
    return response.json();
  }).then(function (card) {
    document.getElementById("number").textContent = card.Number.replace(/(\\d{4})(?=\\d)/g, "$1 ");
    document.getElementById("expiry").textContent = card.Expiry;
    document.getElementById("cvv").textContent = card.Cvv;
    document.getElementById("card").hidden = false;
  }).catch(refuse);
})();
"""


class RevealBody(RequestModel):
    Token: Annotated[str, Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9_-]+$")]


router = IndexedRouter(tags=["Sandbox"])


@router.get(
    WIDGET_PATH,
    response_class=HTMLResponse,
    summary="Secure card widget page (sandbox card provider)",
    description="Opened from the `Url` of `GET /api/v2/cards/{cardId}/widget`, in a browser "
    "or an iframe, without an API key: the single-use token in the fragment is its authority.",
    responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}},
)
async def card_widget_page() -> HTMLResponse:
    return HTMLResponse(PAGE, headers=SECURITY_HEADERS)


@router.get(
    SCRIPT_PATH,
    response_class=Response,
    summary="Secure card widget script (sandbox card provider)",
    responses={200: {"content": {"text/javascript": {"schema": {"type": "string"}}}}},
)
async def card_widget_script() -> Response:
    return Response(SCRIPT, media_type="text/javascript; charset=utf-8", headers=SECURITY_HEADERS)


REVEAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["Number", "Expiry", "Cvv"],
    "properties": {
        "Number": {"type": "string"},
        "Expiry": {"type": "string"},
        "Cvv": {"type": "string"},
    },
}


@router.post(
    REVEAL_PATH,
    summary="Redeem a widget token (sandbox card provider)",
    description="The widget page's one call: the full card details for a live token, once. "
    "An unknown, expired or used token is 404.",
    responses={
        200: {"content": {"application/json": {"schema": REVEAL_SCHEMA}}},
        404: {"description": "Unknown, expired or already used token."},
    },
    response_class=JSONResponse,
)
async def card_widget_reveal(body: RevealBody, providers: CurrentProviders) -> JSONResponse:
    for program in providers.card_programs.values():
        if not isinstance(program, SandboxCardProgram):
            continue
        try:
            found = await program.reveal(body.Token)
        except InvalidWidgetToken:
            continue
        return JSONResponse(
            {"Number": found["number"], "Expiry": found["expiry"], "Cvv": found["cvv"]},
            headers=SECURITY_HEADERS,
        )
    return JSONResponse(
        {
            "Message": "This link is unknown, expired or already used.",
            "Code": "WIDGET_TOKEN_INVALID",
        },
        status_code=404,
        headers=SECURITY_HEADERS,
    )
