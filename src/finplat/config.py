"""Configuration, read once from `FINPLAT_*` environment variables."""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from finplat.sealing.keyring import SecretKeyring

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./var/finplat.db"
# Public on purpose: the sandbox providers are simulators; production sets its own secret.
SANDBOX_CALLBACK_SECRET = "sandbox-provider-callback-secret"  # noqa: S105
# Public on purpose, like the callback secret: seals stored secrets in development only.
SANDBOX_SECRET_KEY = "ZmlucGxhdC1zYW5kYm94LXNlY3JldC1rZXktdjEtMzI="  # noqa: S105


class MissingSecretKey(Exception):
    """Outside the sandbox stored secrets need a key of the operator's own. Not a ValueError,
    so that pydantic does not quote the configuration (its other secrets) in the error."""

    def __init__(self) -> None:
        super().__init__(
            "FINPLAT_SECRET_KEY is required when the sandbox is off: base64 of 32 random bytes "
            "(python -c 'import base64, os; print(base64.urlsafe_b64encode(os.urandom(32))"
            ".decode())')."
        )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FINPLAT_", extra="ignore")

    database_url: str = DEFAULT_DATABASE_URL
    # Sandbox providers and the /api/v2/sandbox/ routes; on by default so a clone works offline.
    sandbox: bool = True
    # None means "follow the sandbox setting", resolved in the validator below.
    allow_loopback_webhooks: bool | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["json", "console"] = "json"
    database_pool_size: int = Field(default=10, ge=1)
    # Idempotency: how long a running request owns its key before a retry may take over, and
    # how long a concurrent duplicate waits for the first request before answering 409.
    idempotency_lease_seconds: float = Field(default=30.0, gt=0)
    idempotency_wait_seconds: float = Field(default=10.0, ge=0)
    # Webhook delivery worker.
    webhook_timeout_seconds: float = Field(default=10.0, gt=0)
    # An authorized card purchase never cleared releases its hold after this many days.
    card_hold_expiry_days: float = Field(default=7.0, gt=0, le=60)
    webhook_lease_seconds: float = Field(default=60.0, gt=0)
    webhook_batch_size: int = Field(default=50, ge=1)
    webhook_poll_seconds: float = Field(default=1.0, gt=0)
    # Requests per API key (the `limits` notation, e.g. "100/second;5000/minute"), shared by
    # every API process through Redis when `redis_url` is set, in memory otherwise.
    rate_limit: str = "100/second"
    redis_url: str | None = None
    # How far a provider callback's signed timestamp may be from this clock, either way.
    provider_callback_tolerance_seconds: float = Field(default=300.0, gt=0)
    # Seals stored secrets (webhook secrets): base64 of 32 random bytes. Unset: a fixed
    # development key while the sandbox is on; required otherwise.
    secret_key: SecretStr = SecretStr("")
    # Keys that sealed stored secrets before a rotation, comma-separated: still read, and
    # resealed with `secret_key` by the maintenance job.
    secret_key_previous: SecretStr = SecretStr("")
    # Largest accepted request body, in bytes.
    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    # Largest accepted file upload (multipart/form-data) request: up to ten scanned documents.
    max_upload_bytes: int = Field(default=25 * 1_048_576, ge=1024)
    # Run the webhook worker and maintenance jobs inside the API process (`serve --no-worker`
    # turns this off when dedicated `finplat worker` processes do the work).
    run_background_jobs: bool = True
    # Simulated latency of sandbox provider calls, in milliseconds.
    sandbox_latency_ms: int = Field(default=0, ge=0)
    # Provider calls: how long one call may take, and how often an idempotent call is retried
    # after a technical failure (non-idempotent calls are never retried).
    provider_timeout_seconds: float = Field(default=10.0, gt=0)
    provider_retries: int = Field(default=2, ge=0, le=10)
    provider_retry_backoff_seconds: float = Field(default=0.05, ge=0)
    # Shared secret that signs provider callbacks (the sandbox providers sign with it too).
    # Unset: a fixed sandbox value while the sandbox is on; otherwise callbacks are refused.
    provider_callback_secret: str = ""
    # Public base URL of this service, for links it hands out (the sandbox's hosted KYC page).
    # When unset, the base URL of the request that asked for the link is used.
    public_base_url: str | None = None
    # How often the sandbox providers' pending callbacks are sent.
    sandbox_callback_poll_seconds: float = Field(default=0.5, gt=0)
    # How often the background job reconciles (settles pending transactions with their
    # providers, compares provider balances with the ledger).
    reconcile_interval_seconds: float = Field(default=300.0, gt=0)
    # Crypto deposits are credited once their transfer has this many blocks on top of it, per
    # chain id (JSON, e.g. '{"1": 64, "-200": 19, "137": 128, "42161": 20}'); a chain left out
    # keeps its default.
    crypto_finality_confirmations: dict[int, int] = Field(default_factory=dict)
    # A crypto flow of at least this amount (stablecoin units) in one operation needs the
    # user's enhanced due diligence.
    crypto_edd_threshold: Decimal = Field(default=Decimal(10000), gt=0)
    # A wallet withdrawal to an address the user never sent to on that chain waits this long
    # after its code was confirmed before it is broadcast (0: no cooling-off).
    crypto_withdrawal_cooling_off_hours: float = Field(default=24.0, ge=0, le=24 * 30)
    # Card top-ups in batches (PostgreSQL only; `cards.topup_batches`): the most requests one
    # batch takes, and how many batches run at once (0 turns batching off).
    topup_batch_size: int = Field(default=16, ge=1, le=1000)
    topup_batch_runners: int = Field(default=2, ge=0, le=64)
    # How long a free runner waits for a full batch while another batch runs (milliseconds).
    topup_batch_linger_ms: float = Field(default=2.0, ge=0, le=1000)
    # Slow clients (docs/decisions.md, "Slow clients"): a request's body must have arrived
    # within `body_timeout_seconds` of its headers (a file upload: `upload_timeout_seconds`
    # plus its declared size at `upload_min_bytes_per_second`), or it is answered 408. The
    # server closes a connection whose request headers take longer than
    # `header_timeout_seconds`, and an idle keep-alive connection after
    # `keep_alive_timeout_seconds`.
    body_timeout_seconds: float = Field(default=5.0, gt=0)
    upload_timeout_seconds: float = Field(default=30.0, gt=0)
    upload_min_bytes_per_second: int = Field(default=100_000, ge=1)
    header_timeout_seconds: float = Field(default=10.0, gt=0)
    keep_alive_timeout_seconds: int = Field(default=5, ge=1)
    # Requests without a valid API key, per client address (the `limits` notation): past it,
    # 429 before any database work. Requests with a key this process knows to be valid are
    # not counted and not refused.
    auth_failure_limit: str = "20/minute"
    # MOR simple users: how long a bearer token lives, the argon2id cost of their passwords
    # (tests lower it; production keeps the library's recommended cost), and the sign-in
    # failures allowed per email and per client address before 429 (the `limits` notation).
    mor_token_ttl_seconds: int = Field(default=900, ge=60, le=86_400)
    mor_password_time_cost: int = Field(default=3, ge=1)
    mor_password_memory_kib: int = Field(default=65_536, ge=8)
    mor_password_parallelism: int = Field(default=4, ge=1)
    mor_sign_in_limit_per_email: str = "5/minute;20/hour"
    mor_sign_in_limit_per_address: str = "30/minute"
    # How many valid API keys each process remembers (`auth.key_store`).
    api_key_cache_size: int = Field(default=10_000, ge=1)

    @model_validator(mode="after")
    def _resolve_loopback_default(self) -> Settings:
        if self.allow_loopback_webhooks is None:
            self.allow_loopback_webhooks = self.sandbox
        if not self.provider_callback_secret and self.sandbox:
            self.provider_callback_secret = SANDBOX_CALLBACK_SECRET
        return self

    @model_validator(mode="after")
    def _resolve_secret_key(self) -> Settings:
        if not self.secret_key.get_secret_value():
            if not self.sandbox:
                raise MissingSecretKey()
            self.secret_key = SecretStr(SANDBOX_SECRET_KEY)
        self.secret_keyring()  # a malformed key stops the start, not the first write
        return self

    def secret_keyring(self) -> SecretKeyring:
        return SecretKeyring.from_config(
            self.secret_key.get_secret_value(), self.secret_key_previous.get_secret_value()
        )

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
