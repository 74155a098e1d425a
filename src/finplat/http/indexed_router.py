"""A router that declines requests for paths none of its routes can match, before matching.

FastAPI (0.165) keeps each included router as a wrapper and, on every request, asks each of
them in turn whether it matches, and each walks all of its routes. With thirty routers and a
few hundred routes that cost about 3 ms per request on the benchmark machine, before any
handler ran (docs/performance.md). A route can only match a path that starts with the literal
part of its template (what comes before its first `{`), so a router whose routes' literal
prefixes all differ from the path can answer "no match" at once, with the same result.
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette._utils import get_route_path
from starlette.routing import BaseRoute, Match
from starlette.types import Scope


def literal_prefix(route: BaseRoute) -> str | None:
    """The fixed start of the paths the route matches; None when unknown (always try it)."""
    path = getattr(route, "path", None)
    if not isinstance(path, str):
        return None
    return path.split("{", 1)[0]


class IndexedRouter(APIRouter):
    """An `APIRouter` whose match first checks the path against its routes' literal prefixes."""

    _indexed_count = -1
    _prefixes: tuple[str, ...] | None = None  # None: some route's prefix is unknown

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        prefixes = self._current_prefixes()
        if prefixes is not None and scope.get("type") == "http":
            path = get_route_path(scope)
            if not path.startswith(prefixes):
                return Match.NONE, {}
        return super().matches(scope)

    def _current_prefixes(self) -> tuple[str, ...] | None:
        # Rebuilt when routes are added after the first request (routes are only ever added).
        if self._indexed_count != len(self.routes):
            found = [literal_prefix(route) for route in self.routes]
            known = [p for p in found if p is not None]
            self._prefixes = tuple(sorted(set(known))) if len(known) == len(found) else None
            self._indexed_count = len(self.routes)
        return self._prefixes
