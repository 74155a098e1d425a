"""The interactive API docs at `/docs` (Swagger UI), served with its script and styles from the
installed `fastapi-offline` package rather than a CDN, so that the page works on a machine
without internet access and tells no one else that the API's docs are being read."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

DOCS_PATH = "/docs"
ASSETS_PATH = "/docs/assets"
# Swagger UI 5 (it reads OpenAPI 3.1, as this document is) and a favicon.
ASSETS_PACKAGE = ("fastapi_offline", "static")
# Swagger UI would otherwise show a badge fetched from the public validator, with the
# document's address, for every document not served from localhost.
SWAGGER_UI_PARAMETERS = {"validatorUrl": None}


def install(app: FastAPI) -> None:
    """Serve the docs page and its assets. The app is built with `docs_url=None` and
    `redoc_url=None`: FastAPI's own pages load from a CDN (Redoc's fetches a logo from one
    whatever it is given), so neither is served."""
    app.mount(ASSETS_PATH, StaticFiles(packages=[ASSETS_PACKAGE]), name="docs-assets")

    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}{app.openapi_url}",
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
            swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
        )

    # A plain route, as FastAPI's own docs page is: not an API operation of the document.
    app.add_route(DOCS_PATH, swagger_ui, include_in_schema=False)
