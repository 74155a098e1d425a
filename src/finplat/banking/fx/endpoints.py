from __future__ import annotations

from finplat.routing import api_router

router = api_router(tags=["Banking"])
