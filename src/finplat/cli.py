"""The `finplat` command: serve, migrate, companies and keys, and the local demo company."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Annotated, TypeVar

import structlog
import typer
import uvicorn
from sqlalchemy.ext.asyncio import AsyncSession

from finplat.auth import operator_keys
from finplat.auth.principal import authenticate
from finplat.companies import service as companies
from finplat.config import MissingSecretKey, get_settings
from finplat.db.engine import create_engine, create_session_factory
from finplat.db.migrate import head_revision, upgrade_to_head
from finplat.db.unit_of_work import unit_of_work
from finplat.errors import ApiError
from finplat.http import server
from finplat.http.observability import configure_logging
from finplat.jobs import run_background
from finplat.ledger.verification import VerificationReport, verify
from finplat.partner_hosted.simulator import ReferencePartner
from finplat.partner_hosted.simulator import serve as serve_partner
from finplat.providers.registry import build_providers
from finplat.reconciliation import service as reconciliation
from finplat.reconciliation.report import ReconciliationReport
from finplat.sealing.keyring import InvalidSecretKey

T = TypeVar("T")

# Pretty tracebacks print local variables, which may hold API keys: never enable them.
app = typer.Typer(
    help="finplat: banking-as-a-service platform.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
company_app = typer.Typer(help="Create companies and manage their API keys.", no_args_is_help=True)
app.add_typer(company_app, name="company")
ledger_app = typer.Typer(help="Inspect the ledger.", no_args_is_help=True)
operator_app = typer.Typer(
    help="Platform operator keys (the /api/v2/admin routes, every company).", no_args_is_help=True
)
app.add_typer(operator_app, name="operator")
app.add_typer(ledger_app, name="ledger")

DEMO_CREDENTIALS = Path("var/demo-credentials.json")
DEMO_COMPANY_NAME = "Demo Company"
LIST_KEYS_HEADER = ("KEY ID", "PREFIX", "CREATED", "REVOKED")


def _in_transaction(work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Run `work` in one committed transaction; API errors exit 1 with their message."""

    settings = get_settings()
    upgrade_to_head(settings.database_url)

    async def run() -> T:
        engine = create_engine(settings)
        try:
            async with unit_of_work(create_session_factory(engine)) as session:
                return await work(session)
        finally:
            await engine.dispose()

    try:
        return asyncio.run(run())
    except ApiError as error:
        typer.echo(f"error: {error.code}: {error.message}", err=True)
        raise typer.Exit(1) from None


@app.command()
def migrate() -> None:
    """Apply database migrations up to the newest revision, naming each one applied."""
    applied = upgrade_to_head(get_settings().database_url)
    for migration in applied:
        typer.echo(f"applied {migration.revision}: {migration.title}")
    already = "" if applied else "already "
    typer.echo(f"database is {already}up to date (revision {head_revision()})")


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 1,
    no_worker: Annotated[
        bool, typer.Option("--no-worker", help="Leave webhooks and jobs to `finplat worker`.")
    ] = False,
) -> None:
    """Apply migrations, then serve the API (with the webhook worker in-process)."""
    if no_worker:
        os.environ["FINPLAT_RUN_BACKGROUND_JOBS"] = "false"
        get_settings.cache_clear()
    settings = get_settings()
    upgrade_to_head(settings.database_url)
    if settings.is_sqlite and workers > 1:
        typer.echo("error: several workers need PostgreSQL (set FINPLAT_DATABASE_URL)", err=True)
        raise typer.Exit(2)
    uvicorn.run(
        "finplat.app:create_app",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        **server.options(settings),
    )


@app.command()
def worker() -> None:
    """Deliver webhooks and run maintenance jobs until stopped (SIGTERM or Ctrl-C)."""
    settings = get_settings()
    upgrade_to_head(settings.database_url)
    configure_logging(settings)

    async def run() -> None:
        engine = create_engine(settings)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        try:
            await run_background(settings, create_session_factory(engine), stop)
        finally:
            await engine.dispose()

    asyncio.run(run())


@app.command("partner-sim")
def partner_sim(
    api_key: Annotated[str, typer.Option(help="The key finplat must send (X-API-Key).")],
    webhook_secret: Annotated[
        str,
        typer.Option(
            envvar="FINPLAT_PARTNER_SIM_WEBHOOK_SECRET",
            help="The company's webhook secret, to verify X-Service-Signature.",
        ),
    ],
    port: Annotated[int, typer.Option(help="TCP port.")] = 8090,
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    delay_ms: Annotated[int, typer.Option(min=0, help="Answer every request this late.")] = 0,
    fail_rate: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of requests answered 503.")
    ] = 0.0,
    default_balance: Annotated[str, typer.Option(help="Every user's starting balance.")] = "1000",
    currency: Annotated[str, typer.Option(help="The balances' currency.")] = "USD",
    stop_after: Annotated[
        float | None, typer.Option(min=0.0, help="Stop by itself after this many seconds.")
    ] = None,
) -> None:
    """Serve a reference partner for partner-hosted balances (the six partner endpoints,
    balances in memory) until stopped or for --stop-after seconds."""
    partner = ReferencePartner(
        api_key=api_key,
        webhook_secret=webhook_secret,
        currency=currency.upper(),
        default_balance=Decimal(default_balance),
        delay_ms=delay_ms,
        fail_rate=fail_rate,
    )
    typer.echo(f"partner-sim on http://{host}:{port} (PartnerHosted.BaseUrl)")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_partner(partner, host=host, port=port, stop_after=stop_after))


@ledger_app.command("verify")
def ledger_verify() -> None:
    """Check the ledger from its entries; exit 1 on any discrepancy."""

    async def work(session: AsyncSession) -> VerificationReport:
        return await verify(session)

    report = _in_transaction(work)
    typer.echo(report.summary())
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def reconcile(
    company_id: Annotated[
        int | None, typer.Option("--company-id", min=1, help="Only this company.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Settle pending transactions the providers decided and compare provider balances with
    the ledger; exit 1 when a difference or an unchecked account remains."""
    settings = get_settings()
    upgrade_to_head(settings.database_url)
    configure_logging(settings)
    # Logs go to stderr so that stdout holds only the report.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=sys.stderr))

    async def run() -> ReconciliationReport:
        engine = create_engine(settings)
        try:
            factory = create_session_factory(engine)
            return await reconciliation.reconcile(
                factory, build_providers(settings, factory), company_id=company_id
            )
        finally:
            await engine.dispose()

    try:
        report = asyncio.run(run())
    except ApiError as error:
        typer.echo(f"error: {error.code}: {error.message}", err=True)
        raise typer.Exit(2) from None
    typer.echo(report.to_json() if as_json else report.summary())
    if not report.ok:
        raise typer.Exit(1)


@company_app.command("create")
def company_create(
    name: Annotated[str, typer.Option("--name", help="The company's name.")],
    mor: Annotated[bool, typer.Option("--mor", help="Enable Merchant-of-Record.")] = False,
    webhook_url: Annotated[
        str | None, typer.Option("--webhook-url", help="Where signed webhooks are sent.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON line.")] = False,
) -> None:
    """Create a company with its first API key and webhook secret (both shown only now)."""
    settings = get_settings()

    async def work(session: AsyncSession) -> companies.CreatedCompany:
        return await companies.create_company(
            session,
            name=name,
            is_mor=mor,
            webhook_url=webhook_url,
            sandbox=settings.sandbox,
            allow_loopback_webhooks=bool(settings.allow_loopback_webhooks),
        )

    created = _in_transaction(work)
    result = {
        "CompanyId": created.company.id,
        "Name": created.company.name,
        "IsMor": created.company.is_mor,
        "WebhookUrl": created.company.webhook_url,
        "ApiKeyId": created.key.key_id,
        "ApiKey": created.key.api_key,
        "WebhookSecret": created.webhook_secret,
    }
    if as_json:
        typer.echo(json.dumps(result))
        return
    typer.echo(f"Company {created.company.id} created: {created.company.name}")
    typer.echo(f"API key (shown once):        {created.key.api_key}")
    typer.echo(f"Webhook secret (shown once): {created.webhook_secret}")


@operator_app.command("create-key")
def operator_create_key(
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON line.")] = False,
) -> None:
    """Create a platform operator key (shown only now): it administers every company on the
    /api/v2/admin routes, and only there."""
    issued = _in_transaction(operator_keys.issue)
    if as_json:
        typer.echo(json.dumps({"OperatorKeyId": issued.key_id, "ApiKey": issued.api_key}))
        return
    typer.echo(f"Operator key {issued.key_id} (shown once): {issued.api_key}")


@company_app.command("set-mor")
def company_set_mor(
    company_id: Annotated[int, typer.Option("--company-id", help="The company.")],
    enabled: Annotated[
        str, typer.Option("--enabled", help="true or false: may the company use /api/v2/mor?")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON line.")] = False,
) -> None:
    """Enable or disable Merchant-of-Record for a company."""
    wanted = enabled.strip().lower()
    if wanted not in {"true", "false"}:
        typer.echo("error: --enabled takes true or false", err=True)
        raise typer.Exit(2)

    async def work(session: AsyncSession) -> bool:
        company = await companies.set_mor(session, company_id=company_id, enabled=wanted == "true")
        return company.is_mor

    is_mor = _in_transaction(work)
    if as_json:
        typer.echo(json.dumps({"CompanyId": company_id, "IsMor": is_mor}))
        return
    typer.echo(f"Company {company_id}: MOR {'enabled' if is_mor else 'disabled'}")


@company_app.command("rotate-key")
def company_rotate_key(
    company_id: Annotated[int, typer.Option("--company-id", help="The company.")],
    revoke_others: Annotated[
        bool, typer.Option("--revoke-others", help="Revoke every other key of the company.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON line.")] = False,
) -> None:
    """Issue a new API key. Old keys keep working until revoked, so clients can switch over."""
    sandbox = get_settings().sandbox

    async def work(session: AsyncSession) -> tuple[companies.IssuedKey, int]:
        return await companies.rotate_api_key(
            session, company_id=company_id, sandbox=sandbox, revoke_others=revoke_others
        )

    issued, revoked = _in_transaction(work)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "CompanyId": company_id,
                    "ApiKeyId": issued.key_id,
                    "ApiKey": issued.api_key,
                    "RevokedKeys": revoked,
                }
            )
        )
        return
    typer.echo(f"API key {issued.key_id} (shown once): {issued.api_key}")
    if revoke_others:
        typer.echo(f"revoked {revoked} other key(s)")


@company_app.command("revoke-key")
def company_revoke_key(
    company_id: Annotated[int, typer.Option("--company-id", help="The company.")],
    key_id: Annotated[int, typer.Option("--key-id", help="The key's id (see list-keys).")],
) -> None:
    """Revoke one API key; requests with it get 401 from now on."""

    async def work(session: AsyncSession) -> None:
        await companies.revoke_api_key(session, company_id=company_id, key_id=key_id)

    _in_transaction(work)
    typer.echo(f"API key {key_id} revoked")


@company_app.command("list-keys")
def company_list_keys(
    company_id: Annotated[int, typer.Option("--company-id", help="The company.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """List a company's keys by id and prefix (never the keys themselves)."""

    async def work(session: AsyncSession) -> list[dict[str, object]]:
        keys = await companies.list_api_keys(session, company_id=company_id)
        return [
            {
                "ApiKeyId": k.id,
                "Prefix": k.display_prefix,
                "CreatedAt": k.created_at.isoformat(),
                "RevokedAt": k.revoked_at.isoformat() if k.revoked_at else None,
            }
            for k in keys
        ]

    rows = _in_transaction(work)
    if as_json:
        for row in rows:
            typer.echo(json.dumps(row))
        return
    table = [LIST_KEYS_HEADER] + [
        tuple("-" if value is None else str(value) for value in row.values()) for row in rows
    ]
    widths = [max(len(line[column]) for line in table) for column in range(len(LIST_KEYS_HEADER))]
    for line in table:
        typer.echo(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        )


@dataclass(frozen=True)
class DemoCompany:
    company_id: int
    api_key: str
    webhook_secret: str
    created: bool


@app.command()
def demo(
    docs_url: Annotated[
        str, typer.Option(help="Shown to the user.")
    ] = "http://127.0.0.1:8000/docs",
) -> None:
    """Make sure a demo company exists and print its API key and webhook secret (local
    development only; run it again to see them again).

    The key is kept in var/demo-credentials.json (mode 0600) because the database holds only
    its hash; if that key no longer works, a new demo company is created. The webhook secret
    is read from the database, so it is the current one after a rotation.
    """
    settings = get_settings()
    saved = _read_demo_credentials()

    async def work(session: AsyncSession) -> DemoCompany:
        if saved is not None:
            try:
                principal = await authenticate(session, str(saved["ApiKey"]))
                if principal.company_id == saved["CompanyId"]:
                    company = await companies.get_company(session, company_id=principal.company_id)
                    return DemoCompany(
                        company.id, str(saved["ApiKey"]), company.webhook_secret, created=False
                    )
            except ApiError:
                pass
        created = await companies.create_company(
            session, name=DEMO_COMPANY_NAME, sandbox=settings.sandbox
        )
        return DemoCompany(
            created.company.id, created.key.api_key, created.webhook_secret, created=True
        )

    credentials = _in_transaction(work)
    if credentials.created:
        _write_demo_credentials(
            {"CompanyId": credentials.company_id, "ApiKey": credentials.api_key}
        )
    api = docs_url.removesuffix("/docs")
    typer.echo(f"Demo company {credentials.company_id}")
    typer.echo(f"  API key:        {credentials.api_key}")
    typer.echo(f"  Webhook secret: {credentials.webhook_secret}")
    typer.echo(f"  Docs:           {docs_url}")
    typer.echo(f"  Shell:          export KEY={credentials.api_key} API={api}")
    typer.echo('  Try:            curl -H "x-api-key: $KEY" $API/api/v2/tiers')
    typer.echo("  (`.venv/bin/finplat demo` prints these again.)")


def _read_demo_credentials() -> dict[str, object] | None:
    try:
        data = json.loads(DEMO_CREDENTIALS.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and {"CompanyId", "ApiKey"} <= data.keys() else None


def _write_demo_credentials(credentials: dict[str, object]) -> None:
    DEMO_CREDENTIALS.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(DEMO_CREDENTIALS, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(credentials, handle)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except (MissingSecretKey, InvalidSecretKey) as error:
        # A configuration error: one line naming the variable, never a traceback.
        typer.echo(f"error: {error}", err=True)
        sys.exit(2)
