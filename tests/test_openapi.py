"""The OpenAPI document describes every route, its auth and its errors, in PascalCase."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
from fastapi import FastAPI
from fastapi.routing import APIRoute

from finplat.http.routing import api_router, served_routes
from finplat.kit.fields import EMAIL_PATTERN, SAFE_TEXT_FORMAT, SAFE_TEXT_PATTERN

PASCAL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
# Schemas whose property names the spec writes otherwise (lower-case).
# Spec exceptions: `cardNo`, `cvv` (card responses), the auto-lock body's `enabled` and the
# payment collection's `merchantReferenceId`, the pay-in address request's `crypto_currency`
# and `chain_id` (also the crypto card load's, whose chain ids the spec lists under `chain_id`).
SPEC_NAMED_PROPERTIES = {
    "PayinAddressRequest",
    "CryptoCardLoadRequest",
    "BusinessApplicationResponse",
    "KycConfiguration",
    "AutoLockBody",
    "CardResponse",
    "MorCardResponse",  # a `CardResponse` with its assignee
    "CollectionCreate",
    "CollectionResponse",
}


async def openapi(anonymous: httpx.AsyncClient) -> dict:  # type: ignore[type-arg]
    response = await anonymous.get("/openapi.json")
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


async def test_docs_page_loads_its_assets_from_the_service_itself(
    anonymous: httpx.AsyncClient,
) -> None:
    response = await anonymous.get("/docs")
    assert response.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', response.text)
    assert len(assets) == 3  # script, styles, icon
    assert all(asset.startswith("/docs/assets/") for asset in assets), assets
    for asset in assets:
        served = await anonymous.get(asset)
        assert served.status_code == 200, asset
        assert served.content


async def test_redoc_and_its_cdn_assets_are_not_served(anonymous: httpx.AsyncClient) -> None:
    assert (await anonymous.get("/redoc")).status_code == 404


def undocumented_routes(app: FastAPI, document: dict) -> list[str]:  # type: ignore[type-arg]
    """Served API routes (method and path) missing from the OpenAPI document."""
    paths = document["paths"]
    missing = []
    for route in served_routes(app.routes):
        if isinstance(route, APIRoute):
            for method in sorted(route.methods or ()):
                # `path_format`: the documented path (without converters such as `:int`).
                if method.lower() not in paths.get(route.path_format, {}):
                    missing.append(f"{method} {route.path_format}")
    return missing


async def test_every_route_is_documented(app: FastAPI, anonymous: httpx.AsyncClient) -> None:
    assert len([r for r in served_routes(app.routes) if isinstance(r, APIRoute)]) >= 15
    assert undocumented_routes(app, await openapi(anonymous)) == []


async def test_a_route_hidden_from_the_document_fails_the_inventory(
    app: FastAPI, anonymous: httpx.AsyncClient
) -> None:
    router = api_router()

    @router.post("/api/v2/test-hidden", include_in_schema=False)
    async def hidden() -> None:
        return None

    app.include_router(router)
    assert undocumented_routes(app, await openapi(anonymous)) == ["POST /api/v2/test-hidden"]


async def test_api_routes_declare_the_api_key_scheme(anonymous: httpx.AsyncClient) -> None:
    document = await openapi(anonymous)
    scheme = document["components"]["securitySchemes"]["ApiKey"]
    assert scheme == {**scheme, "type": "apiKey", "in": "header", "name": "x-api-key"}
    for path, item in document["paths"].items():
        for operation in item.values():
            if path.startswith("/api/v2"):
                # Every alternative needs the key (a MOR self-service route also the bearer).
                security = operation.get("security", [])
                assert security, path
                assert all(requirement.get("ApiKey") == [] for requirement in security), path


async def test_every_api_operation_documents_its_errors(anonymous: httpx.AsyncClient) -> None:
    document = await openapi(anonymous)
    for path, item in document["paths"].items():
        if not path.startswith("/api/v2"):
            continue
        for operation in item.values():
            responses = operation["responses"]
            assert "422" not in responses, path
            for status in ("401", "500"):
                schema = responses[status]["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorBody"}
            if operation.get("parameters") or operation.get("requestBody"):
                assert "400" in responses, path


async def test_schemas_and_properties_are_pascal_case(anonymous: httpx.AsyncClient) -> None:
    schemas = (await openapi(anonymous))["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    for name, schema in schemas.items():
        assert PASCAL.match(name), name
        if name in SPEC_NAMED_PROPERTIES:
            continue
        for prop in schema.get("properties", {}):
            assert PASCAL.match(prop), (name, prop)


async def test_request_bodies_carry_examples(anonymous: httpx.AsyncClient) -> None:
    schemas = (await openapi(anonymous))["components"]["schemas"]
    assert schemas["UserCreate"]["example"]["AccountType"] == "personal"
    assert "example" in schemas["ErrorBody"]


def _nodes(document: object) -> Iterator[dict]:  # type: ignore[type-arg]
    if isinstance(document, dict):
        yield document
        for value in document.values():
            yield from _nodes(value)
    elif isinstance(document, list):
        for value in document:
            yield from _nodes(value)


async def test_long_patterns_appear_as_named_formats_with_a_sentence(
    anonymous: httpx.AsyncClient,
) -> None:
    document = await openapi(anonymous)
    patterns = {node.get("pattern") for node in _nodes(document)}
    assert not patterns & {SAFE_TEXT_PATTERN, EMAIL_PATTERN}
    user = document["components"]["schemas"]["UserCreate"]["properties"]
    assert (user["FirstName"]["format"], user["FirstName"]["description"]) == (
        "safe-text",
        SAFE_TEXT_FORMAT.description,
    )
    assert user["ExternalUserId"]["format"] == "safe-text"
    assert user["ExternalUserId"]["description"].endswith(SAFE_TEXT_FORMAT.description)
    assert user["Email"]["format"] == "email"
    assert "special-use domains (.test, .local," in user["Email"]["description"]
    (external_user_id,) = (
        parameter
        for parameter in document["paths"]["/api/v2/users"]["get"]["parameters"]
        if parameter["name"] == "externalUserId"
    )
    assert external_user_id["schema"]["anyOf"][0]["format"] == "safe-text"


async def test_document_is_a_valid_openapi_document(anonymous: httpx.AsyncClient) -> None:
    from openapi_spec_validator import validate

    validate(await openapi(anonymous))


async def test_every_api_operation_documents_auth_rate_limit_and_body_errors(
    anonymous: httpx.AsyncClient,
) -> None:
    document = await openapi(anonymous)
    for path, item in document["paths"].items():
        if not path.startswith("/api/v2"):
            continue
        for method, operation in item.items():
            responses = operation["responses"]
            assert {"401", "429", "500"} <= responses.keys(), (method, path)
            assert "Retry-After" in responses["429"]["headers"]
            if "requestBody" in operation:
                assert {"400", "413", "415"} <= responses.keys(), (method, path)


async def test_links_name_real_operations_and_parameters(anonymous: httpx.AsyncClient) -> None:
    document = await openapi(anonymous)
    operations = {
        op["operationId"]: op for item in document["paths"].values() for op in item.values()
    }
    links = [
        link
        for item in document["paths"].values()
        for op in item.values()
        for response in op["responses"].values()
        for link in response.get("links", {}).values()
    ]
    assert len(links) >= 6
    for link in links:
        target = operations[link["operationId"]]
        names = {p["name"] for p in target.get("parameters", [])}
        assert set(link.get("parameters", {})) <= names, link


# The request fields whose values are a closed list the spec does not state, kept because money
# or a provider needs it: (schema, property).
CLOSED_LISTS = [
    ("TopupRequest", "Token"),
    ("UnloadRequest", "Currency"),
    ("CardOrder", "Currency"),
    ("CardOrder", "DesignId"),
    ("PayeeCreate", "PaymentType"),
    ("PayeeCreate", "PaymentMethod"),
    ("PayeeCreate", "Currency"),
    ("QuoteRequest", "SellCurrency"),
    ("PayoutTerms", "Currency"),
    ("IdentityDocumentInput", "Type"),
    ("AssociatedPersonCreate", "Role"),
    ("ApplicationAddress", "Type"),
]
# The fields the spec leaves open that are free text here.
OPEN_FIELDS = [
    ("BusinessApplicationCreate", "BusinessType"),
    ("ComplianceRequirements", "BusinessType"),
    ("KycQuestionnaire", "IpAddress"),
]


async def test_a_closed_list_the_spec_leaves_open_says_why_it_is_closed(
    anonymous: httpx.AsyncClient,
) -> None:
    schemas = (await openapi(anonymous))["components"]["schemas"]
    for schema, name in CLOSED_LISTS:
        assert "A closed list" in schemas[schema]["properties"][name]["description"], name


async def test_fields_the_spec_leaves_open_are_free_text(anonymous: httpx.AsyncClient) -> None:
    schemas = (await openapi(anonymous))["components"]["schemas"]
    for schema, name in OPEN_FIELDS:
        prop = schemas[schema]["properties"][name]
        branches = [b for b in prop.get("anyOf", [prop]) if b.get("type") != "null"]
        assert [set(b) & {"enum", "$ref"} for b in branches] == [set()], name
        # Free text as every free-text field is: the named `safe-text` format, no other.
        assert [b.get("format", SAFE_TEXT_FORMAT.name) for b in branches] == [SAFE_TEXT_FORMAT.name]
        assert [b["type"] for b in branches] == ["string"]
        assert branches[0]["maxLength"] == 64
