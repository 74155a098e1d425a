"""The application factory: settings, engine and state, the middleware, the routers listed in
`finplat.api` and the error handlers of `finplat.http`."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from finplat import __version__, api, callback_handlers
from finplat.auth.failure_throttle import FailedAuthThrottle
from finplat.auth.key_store import ApiKeyStore
from finplat.cards.funding.batches.lane import TopupLane
from finplat.cards.funding.batches.service import TopupBatches
from finplat.config import Settings, get_settings
from finplat.crypto.deposits import finality
from finplat.db.engine import create_engine, create_session_factory
from finplat.http import docs_page, openapi
from finplat.http.error_handlers import install_error_handlers
from finplat.http.observability import RequestContextMiddleware, configure_logging
from finplat.http.rate_limit import ApiKeyRateLimiter
from finplat.http.request_body import RequestBodyGuard
from finplat.jobs import run_background
from finplat.mor.identity.throttle import SignInThrottle
from finplat.providers.registry import build_providers
from finplat.providers.sandbox import emissions as sandbox_emissions

YOUNG_GENERATION_THRESHOLD = 20_000


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or get_settings()
    configure_logging(settings)
    engine = create_engine(settings)
    session_factory = create_session_factory(engine)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Everything built so far (modules, routes, models) lives as long as the process: out
        # of the collector's reach, a full collection scans only what requests leave behind
        # instead of pausing every request for the whole heap (about 150 ms here). A request's
        # objects die by reference counting; collecting the young generation every 700
        # allocations only rescans the objects of the requests in flight (2,000 collections
        # in a 40 s benchmark against 23 at this threshold; docs/performance.md).
        gc.freeze()
        gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *gc.get_threshold()[1:])
        stop = asyncio.Event()
        background = (
            asyncio.create_task(run_background(settings, session_factory, stop))
            if settings.run_background_jobs
            else None
        )
        try:
            yield
        finally:
            stop.set()
            if background is not None:
                await background
            await engine.dispose()

    app = FastAPI(
        title="finplat API",
        version=__version__,
        description=openapi.API_DESCRIPTION,
        lifespan=lifespan,
        generate_unique_id_function=lambda route: route.name,
        # Served offline by `finplat.http.docs_page` instead of from a CDN.
        docs_url=None,
        redoc_url=None,
        # No OpenTelemetry here: the request id and the structured access log are the trace.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.settings = settings
    finality.configure(settings.crypto_finality_confirmations)
    app.state.engine = engine
    app.state.session_factory = session_factory
    app.state.providers = build_providers(settings, session_factory)
    app.state.rate_limiter = ApiKeyRateLimiter(settings.rate_limit, redis_url=settings.redis_url)
    app.state.auth_throttle = FailedAuthThrottle(
        settings.auth_failure_limit, redis_url=settings.redis_url
    )
    app.state.api_keys = ApiKeyStore(settings.api_key_cache_size)
    app.state.mor_sign_in_throttle = SignInThrottle(settings)

    docs_page.install(app)
    for router in api.ROUTERS:
        app.include_router(router)
    for router in api.SANDBOX_ROUTERS if settings.sandbox else ():
        app.include_router(router, dependencies=[Depends(sandbox_emissions.collecting)])
    callback_handlers.load()
    install_error_handlers(app)
    app.state.topup_batches = None
    if settings.topup_batch_runners and not settings.is_sqlite:
        app.state.topup_batches = TopupBatches(
            app.state,
            batch_size=settings.topup_batch_size,
            runners=settings.topup_batch_runners,
            linger_seconds=settings.topup_batch_linger_ms / 1000,
        )
    # Added last = outermost: the request id and access log wrap everything, the body's size
    # and time limits apply before routing; batched top-ups are served inside both.
    app.add_middleware(TopupLane)
    app.add_middleware(
        RequestBodyGuard,
        max_bytes=settings.max_body_bytes,
        max_upload_bytes=settings.max_upload_bytes,
        body_timeout=settings.body_timeout_seconds,
        upload_timeout=settings.upload_timeout_seconds,
        upload_rate=settings.upload_min_bytes_per_second,
    )
    app.add_middleware(RequestContextMiddleware)
    app.openapi = lambda: openapi.document(app)  # type: ignore[method-assign]
    return app
