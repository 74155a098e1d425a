"""The OpenAPI document: FastAPI's, corrected to what the service really answers, with the
operations' links and the API's description."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from finplat.errors import ErrorBody
from finplat.kit.fields import NAMED_FORMATS

API_DESCRIPTION = """\
finplat: users, KYC, cards, banking and signed webhooks for partner companies, behind one API.

Every `/api/v2` route needs the company API key in exactly one `x-api-key` header (two are
401). Property names are PascalCase unless the spec writes them otherwise (`cardNo`, `enabled`,
...); in requests they match case-insensitively, so `accountId`, `AccountId` and `ACCOUNTID` are
one field (a field sent twice, in any case, is 400 `DUPLICATE_FIELD`; an unknown field is 400
`VALIDATION_ERROR`). Responses and this document keep the canonical spelling. Amounts are exact
decimals: a JSON number (`100.5`) or the same decimal as a string (`"100.50"`; no exponent,
spaces or commas); responses write numbers. An integer field takes an integer literal (`1`,
never `1.0` or `1e0`); ids are from 1 to 9007199254740991 in paths, query strings and bodies
alike. Every error has the same body: `Message`, `Code`, `Status`, `ValidationErrors`
(field-level, keyed by the canonical field name) and `Details`. Integers in paths and query
strings are written with the digits 0-9 only (`6`, not `6.0`, `+6` or ` 6`): anything else is
400 `VALIDATION_ERROR`.

Request bodies are UTF-8 JSON; a body that is not UTF-8 JSON (or uses `NaN`/`Infinity`) is 400
`MALFORMED_JSON`. A body must arrive whole within a few seconds of its headers (file uploads:
longer, in proportion to their size), or the request is answered 408 `REQUEST_TIMEOUT`.
Requests without a valid API key are counted per client address: past the limit (20 a minute
by default) they are answered 429 `AUTHENTICATION_THROTTLED` with `Retry-After`.

Card purchases send webhooks of domain `card`, one per event of the purchase:
`card.transaction.authorized` (an authorization or an incremental one), `.declined`,
`.cleared`, `.reversed`, `.refunded` and `.expired` (a hold released after the expiry period).
`data` holds `cardTransactionId`, `authorizationId`, `cardId`, `userId`, `eventType`, `amount`,
`currency`, `status`, `heldAmount`, `clearedAmount`, `merchant`, `mcc`, `country`,
`declineReason` and `rulesFired`.

Partner-hosted balances (`PartnerHosted` in `PUT /api/v2/company/configuration`): the partner
keeps the users' money and finplat calls it, with the partner's key in `X-API-Key` and
`X-Service-Signature` (HMAC-SHA256 of the exact body with the webhook secret, as webhooks):
`POST {BaseUrl}/authorizations` `{CardTransactionId, AuthorizationId, ExternalUserId, CardId,
Amount, Currency, Merchant, Mcc, Country, PartialApproval}` answered `{Approved,
ApprovedAmount?, DeclineReason?}` within `TimeoutMs` (else `FallbackDecision`);
`POST {BaseUrl}/reversals`, `/clearings`, `/refunds` and `/adjustments` `{IdempotencyId,
CardTransactionId, AuthorizationId, ExternalUserId, CardId, Amount, Currency, Merchant,
Reason?}` (retried until a 2xx; apply each `IdempotencyId` once); and
`GET {BaseUrl}/balances/{ExternalUserId}` answered `{Balances: [{Currency, Available,
Ledger?}]}`, shown at `GET /api/v2/users/{userId}/partner-balances`.
"""


# How operations chain (OpenAPI links): what a response returns and which operations take it.
# They document the flows for readers and drive schemathesis' stateful phase.
_LINKS: dict[tuple[str, str, str], dict[str, dict[str, Any]]] = {
    ("/api/v2/users", "post", "201"): {
        "GetUser": {"operationId": "get_user", "parameters": {"userId": "$response.body#/Id"}},
        "SelectTier": {
            "operationId": "select_tier",
            "parameters": {"userId": "$response.body#/Id"},
        },
        "FindByExternalUserId": {
            "operationId": "list_users",
            "parameters": {"externalUserId": "$response.body#/ExternalUserId"},
        },
    },
    ("/api/v2/webhooks/test", "post", "202"): {
        "GetEvent": {
            "operationId": "get_event",
            "parameters": {"eventId": "$response.body#/EventId"},
        },
        "ListDeliveries": {
            "operationId": "list_deliveries",
            "parameters": {"eventId": "$response.body#/EventId"},
        },
        "RetryDelivery": {
            "operationId": "retry_delivery",
            "parameters": {"deliveryId": "$response.body#/DeliveryIds/0"},
        },
    },
    ("/api/v2/sandbox/company/funding", "post", "200"): {
        "Balances": {"operationId": "company_balances"},
    },
}

# The scheme name of MOR simple users' bearer tokens (`finplat.mor.identity.bearer`).
BEARER_SCHEME = "MorBearer"


def _add_links(schema: dict[str, Any]) -> None:
    paths = schema.get("paths", {})
    for (path, method, status), links in _LINKS.items():
        operation = paths.get(path, {}).get(method)
        if operation is not None and status in operation.get("responses", {}):
            operation["responses"][status]["links"] = links


def _name_long_patterns(node: Any) -> None:
    """Replace each long pattern by its named format and sentence (`NAMED_FORMATS`), wherever
    the document carries it: a reader gets words, the fuzzer a strategy per format."""
    if isinstance(node, dict):
        pattern = node.get("pattern")
        named = NAMED_FORMATS.get(pattern) if isinstance(pattern, str) else None
        if named is not None:
            del node["pattern"]
            node["format"] = named.name
            description = node.get("description") or ""
            if named.description not in description:
                node["description"] = f"{description} {named.description}".strip()
        for value in node.values():
            _name_long_patterns(value)
    elif isinstance(node, list):
        for value in node:
            _name_long_patterns(value)


def document(app: FastAPI) -> dict[str, Any]:
    """The generated document, corrected to what the service really answers.

    Request validation fails with 400 and the standard error body, never FastAPI's 422 shape.
    """
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}

    def error(description: str) -> dict[str, Any]:
        return {"description": description, "content": {"application/json": {"schema": error_ref}}}

    for path, path_item in schema.get("paths", {}).items():
        for operation in path_item.values():
            responses = operation.setdefault("responses", {})
            if responses.pop("422", None) is not None and "400" not in responses:
                responses["400"] = error("Invalid request.")
            if path.startswith("/api/v2"):
                responses.setdefault(
                    "429",
                    error(
                        "Rate limit for this API key exceeded (`RATE_LIMITED`), or too many "
                        "requests without a valid key from this address "
                        "(`AUTHENTICATION_THROTTLED`)."
                    ),
                )
                responses["429"]["headers"] = {
                    "Retry-After": {
                        "description": "Seconds to wait before retrying.",
                        "schema": {"type": "integer"},
                    }
                }
            security = operation.get("security")
            if isinstance(security, list) and any(BEARER_SCHEME in item for item in security):
                # FastAPI lists each scheme a route depends on as an alternative; a MOR
                # self-service route needs the key AND the bearer token.
                operation["security"] = [{k: v for item in security for k, v in item.items()}]
            if "requestBody" in operation:
                responses.setdefault("408", error("The request body did not arrive in time."))
                responses.setdefault("413", error("Request body too large."))
                responses.setdefault("415", error("Request body is not JSON."))
    _add_links(schema)
    _name_long_patterns(schema)
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    components.setdefault("ErrorBody", ErrorBody.model_json_schema())
    app.openapi_schema = schema
    return schema
