"""Integers in paths and query strings are ASCII digits and nothing else
(`finplat.http.integer_parameters`): pydantic's lax reading of text would take these as numbers."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute

from finplat.errors import PROBLEM_JSON, answers_problem_details
from finplat.http.integer_parameters import NOT_DIGITS, integer_parameters
from finplat.http.rate_limit import ApiKeyRateLimiter
from finplat.http.routing import AuthenticatedRoute, served_routes
from tests.http.test_errors import assert_standard

NOT_PLAIN_DIGITS = [" 6", "6 ", "6\u0085", "6.0", "+6", "6_0", "", "٦"]
PATH_PARAMETER = re.compile(r"\{(\w+)\}")


@pytest.mark.parametrize("value", NOT_PLAIN_DIGITS)
async def test_an_integer_query_parameter_that_is_not_plain_digits_is_invalid(
    api: httpx.AsyncClient, value: str
) -> None:
    response = await api.get("/api/v2/cards", params={"userId": value})
    body = assert_standard(response, 400, "VALIDATION_ERROR")
    assert body["ValidationErrors"] == {"UserId": [NOT_DIGITS]}


@pytest.mark.parametrize("value", ["6\u0085", "6.0", "+6", "6_0"])
async def test_an_integer_path_parameter_that_is_not_plain_digits_is_invalid(
    api: httpx.AsyncClient, value: str
) -> None:
    body = assert_standard(await api.get(f"/api/v2/users/{value}"), 400, "VALIDATION_ERROR")
    assert body["ValidationErrors"] == {"UserId": [NOT_DIGITS]}


async def test_a_repeated_integer_query_parameter_is_checked_in_every_copy(
    api: httpx.AsyncClient,
) -> None:
    response = await api.get("/api/v2/users", params=[("page", "1"), ("page", "1.0")])
    body = assert_standard(response, 400, "VALIDATION_ERROR")
    assert body["ValidationErrors"] == {"Page": [NOT_DIGITS]}


async def test_plain_digits_still_read_as_the_number(api: httpx.AsyncClient) -> None:
    response = await api.get("/api/v2/users", params={"page": "01", "pageSize": "5"})
    assert response.status_code == 200, response.text
    assert (response.json()["Page"], response.json()["PageSize"]) == (1, 5)


def _parameters(operation: dict[str, Any]) -> list[tuple[dict[str, Any], bool]]:
    """Each parameter of an operation, and whether it is an integer."""
    found = []
    for parameter in operation.get("parameters", []):
        schema = parameter.get("schema", {})
        kinds = {schema.get("type")} | {a.get("type") for a in schema.get("anyOf", [])}
        found.append((parameter, "integer" in kinds))
    return found


def _operations(app: FastAPI) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, operations in app.openapi()["paths"].items()
        for method, operation in operations.items()
    ]


def test_every_integer_parameter_in_the_document_is_checked_by_the_route_class(
    app: FastAPI,
) -> None:
    routes = {
        (method, route.path_format): route
        for route in served_routes(app.routes)
        if isinstance(route, APIRoute)
        for method in route.methods or ()
    }
    checked = 0
    for method, path, operation in _operations(app):
        documented = {(p["name"], p["in"]) for p, integer in _parameters(operation) if integer}
        if not documented:
            continue
        route = routes[(method, path)]
        assert isinstance(route, AuthenticatedRoute), (method, path)
        found = {(p.name, p.location) for p in integer_parameters(route.dependant)}
        assert found == documented, (method, path)
        checked += 1
    assert checked > 80  # the document was read: every operation with an id


async def test_integer_parameters_refuse_what_is_not_plain_digits_across_the_api(
    api: httpx.AsyncClient, app: FastAPI
) -> None:
    """Every operation whose path parameters are all integers, each integer in turn."""
    # The sweep sends more requests than one key may in a minute.
    app.state.rate_limiter = ApiKeyRateLimiter("100000/second")
    swept = 0
    for method, path, operation in _operations(app):
        parameters = _parameters(operation)
        if not all(integer for p, integer in parameters if p["in"] == "path"):
            continue  # string ids have shapes of their own; the test above covers these
        for parameter, integer in parameters:
            if not integer:
                continue
            name, where = parameter["name"], parameter["in"]

            def value(found: re.Match[str], name: str = name, where: str = where) -> str:
                return "6.0" if (found.group(1), where) == (name, "path") else "1"

            url = PATH_PARAMETER.sub(value, path)
            response = await api.request(
                method, url, params={name: "6.0"} if where == "query" else {}
            )
            if where == "path" and response.status_code == 404:
                continue  # a `{name:id}` route matches digits only: no route, as for any word
            key = name[:1].upper() + name[1:]
            if answers_problem_details(path):  # the legacy loyalty routes: problem details
                assert response.headers["content-type"] == PROBLEM_JSON
                assert (response.status_code, response.json()["code"]) == (400, "VALIDATION_ERROR")
                assert response.json()["errors"] == {key: [NOT_DIGITS]}, (method, path, name)
            else:
                body = assert_standard(response, 400, "VALIDATION_ERROR")
                assert body["ValidationErrors"] == {key: [NOT_DIGITS]}, (method, path, name)
            swept += 1
    assert swept > 50
