"""The server's start tunes the garbage collector for a long-lived process serving requests."""

from __future__ import annotations

import gc

from finplat.app import YOUNG_GENERATION_THRESHOLD, create_app
from finplat.config import Settings


async def test_startup_freezes_the_heap_and_collects_young_objects_less_often(
    settings: Settings,
) -> None:
    threshold = gc.get_threshold()
    app = create_app(settings.model_copy(update={"run_background_jobs": False}))
    try:
        async with app.router.lifespan_context(app):
            assert gc.get_freeze_count() > 0
            assert gc.get_threshold()[0] == YOUNG_GENERATION_THRESHOLD
            assert gc.get_threshold()[1:] == threshold[1:]
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
