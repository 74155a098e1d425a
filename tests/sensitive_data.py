"""The sensitive-data scanner: what must never appear in a response, a log line or a webhook.

* a card number: a run of 13 to 19 digits (spaces or dashes allowed between them) that passes
  the Luhn check;
* a CVV other than the literal `***`; a PIN; an SSN (123-45-6789, or 9 digits under an
  `ssn`/`tin` key);
* an API key (a company's or a platform operator's) anywhere but the one response that
  created a MOR child company with it (`ApiKey`, once per key); a webhook secret anywhere but
  the one response that rotated it or created that child (`WebhookSecret`, once);
* a voucher code anywhere but the one response that issued it (`PlaintextCode`, once per
  code);
* a voucher redemption's or a crypto wallet withdrawal's one-time code (`"Code": "123456"`)
  anywhere but the sandbox's inbox (`GET /api/v2/sandbox/vouchers/redemptions/{id}/code`,
  `GET /api/v2/sandbox/crypto/wallet-withdrawals/{transferId}/code`);
* a key that seals stored secrets (`FINPLAT_SECRET_KEY`: the sandbox's, and any a test
  registers), in either base64 alphabet; a partner-hosted company's partner `ApiKey` (the
  tests register theirs with `watch_key`: it is sent only to the partner, in `X-API-Key`);
* a MOR simple user's bearer token (`mor_at_...`) anywhere but the one response that issued it
  (`POST /api/v2/mor/public/auth/token`, once per token); a password field with a value
  (`"Password": "..."`, `CurrentPassword`, `NewPassword`), or an argon2 hash, anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from finplat.config import SANDBOX_SECRET_KEY

CARD_CANDIDATE = re.compile(r"(?<![0-9A-Za-z])\d(?:[ -]?\d){12,18}(?![0-9A-Za-z])")
# A UUID whose first groups happen to be all digits reads as a dashed card number (one in a
# few thousand passes Luhn as well): digits inside a UUID are not a card.
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
CVV = re.compile(r'"(?:cvv|cvc|cvv2|cvc2)"\s*:\s*("(?!\*\*\*")[^"]*"|\d+)', re.IGNORECASE)
PIN = re.compile(r'"(?:pin|pinCode|pin_code)"\s*:\s*"?\d{4,12}"?', re.IGNORECASE)
SSN = re.compile(
    r"(?<![0-9])\d{3}-\d{2}-\d{4}(?![0-9])|\"(?:ssn|tin)\"\s*:\s*\"?\d{9}\"?", re.IGNORECASE
)
API_KEY = re.compile(r"fp_(?:test|live|op)_[A-Za-z0-9]{43}")  # company and operator keys
WEBHOOK_SECRET = re.compile(r"whsec_[A-Za-z0-9+/]{43}=")
ROTATION_FIELD = re.compile(r'"WebhookSecret"\s*:\s*"(whsec_[A-Za-z0-9+/]{43}=)"')
# A MOR child company's first key, in the response that created the child.
PROVISIONED_KEY_FIELD = re.compile(r'"ApiKey"\s*:\s*"(fp_(?:test|live)_[A-Za-z0-9]{43})"')
# Voucher codes as issued (`finplat.vouchers.codes`), also written without their dashes.
VOUCHER_CODE = re.compile(r"VCH(?:-?[0-9A-HJKMNP-TV-Z]{4}){5}(?![0-9A-Z])")
ONE_TIME_CODE = re.compile(r'"Code"\s*:\s*"\d{6}"')
MOR_TOKEN = re.compile(r"mor_at_[A-Za-z0-9_-]{43}")
ISSUED_TOKEN_FIELD = re.compile(r'"AccessToken"\s*:\s*"(mor_at_[A-Za-z0-9_-]{43})"')
# As the API spells the fields (PascalCase): the /docs page's script has its own "password".
PASSWORD = re.compile(r'"(?:Password|CurrentPassword|NewPassword)"\s*:\s*"[^"]')
PASSWORD_HASH = re.compile(r"\$argon2(?:id|i|d)\$")
ISSUED_CODE_FIELD = re.compile(r'"PlaintextCode"\s*:\s*"(VCH(?:-[0-9A-HJKMNP-TV-Z]{4}){5})"')


def luhn_valid(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


@dataclass(frozen=True)
class Finding:
    kind: str
    source: str
    excerpt: str


def _spellings(key: str) -> set[str]:
    """A base64 key as either alphabet writes it, with or without its padding."""
    standard = key.replace("-", "+").replace("_", "/")
    urlsafe = key.replace("+", "-").replace("/", "_")
    return {spelling.rstrip("=") for spelling in (standard, urlsafe)}


def find(
    text: str,
    source: str,
    *,
    rotation_response: bool = False,
    issuing_response: bool = False,
    inbox_response: bool = False,
    provisioning_response: bool = False,
    token_response: bool = False,
    announced: set[str] | None = None,
    secret_keys: set[str] | frozenset[str] = frozenset({SANDBOX_SECRET_KEY}),
) -> list[Finding]:
    findings: list[Finding] = []

    def add(kind: str, match: re.Match[str]) -> None:
        start = max(0, match.start() - 30)
        findings.append(Finding(kind, source, text[start : match.end() + 30]))

    uuids = [m.span() for m in UUID.finditer(text)]
    for match in CARD_CANDIDATE.finditer(text):
        if any(start <= match.start() and match.end() <= end for start, end in uuids):
            continue
        digits = re.sub(r"[ -]", "", match.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            add("card number", match)
    provisioned: set[str] = set()
    if provisioning_response and announced is not None:
        for match in PROVISIONED_KEY_FIELD.finditer(text):
            if match.group(1) not in announced:
                announced.add(match.group(1))
                provisioned.add(match.group(1))
    for kind, pattern in (
        ("CVV", CVV),
        ("PIN", PIN),
        ("SSN", SSN),
        ("API key", API_KEY),
        ("password", PASSWORD),
        ("password hash", PASSWORD_HASH),
    ):
        for match in pattern.finditer(text):
            if match.group() not in provisioned:
                add(kind, match)
    allowed: set[str] = set()
    if (rotation_response or provisioning_response) and announced is not None:
        for match in ROTATION_FIELD.finditer(text):
            if match.group(1) not in announced:
                announced.add(match.group(1))
                allowed.add(match.group(1))
    for match in WEBHOOK_SECRET.finditer(text):
        if match.group() not in allowed:
            add("webhook secret", match)
    issued: set[str] = set()
    if issuing_response and announced is not None:
        for match in ISSUED_CODE_FIELD.finditer(text):
            if match.group(1) not in announced:
                announced.add(match.group(1))
                issued.add(match.group(1))
    for match in VOUCHER_CODE.finditer(text):
        if match.group() not in issued:
            add("voucher code", match)
    tokens: set[str] = set()
    if token_response and announced is not None:
        for match in ISSUED_TOKEN_FIELD.finditer(text):
            if match.group(1) not in announced:
                announced.add(match.group(1))
                tokens.add(match.group(1))
    for match in MOR_TOKEN.finditer(text):
        if match.group() not in tokens:
            add("bearer token", match)
    if not inbox_response:
        for match in ONE_TIME_CODE.finditer(text):
            add("one-time code", match)
    for key in secret_keys:
        for spelling in _spellings(key):
            for match in re.finditer(re.escape(spelling), text):
                add("secret key", match)
    return findings


@dataclass
class Scanner:
    findings: list[Finding] = field(default_factory=list)
    announced_secrets: set[str] = field(default_factory=set)
    secret_keys: set[str] = field(default_factory=lambda: {SANDBOX_SECRET_KEY})
    scanned: int = 0

    def check(
        self,
        data: bytes | str,
        source: str,
        *,
        rotation_response: bool = False,
        issuing_response: bool = False,
        inbox_response: bool = False,
        provisioning_response: bool = False,
        token_response: bool = False,
    ) -> None:
        text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
        self.scanned += 1
        self.findings += find(
            text,
            source,
            rotation_response=rotation_response,
            issuing_response=issuing_response,
            inbox_response=inbox_response,
            provisioning_response=provisioning_response,
            token_response=token_response,
            announced=self.announced_secrets,
            secret_keys=self.secret_keys,
        )

    def watch_key(self, key: str) -> str:
        """Have the scanner look for `key` (a key a test configures) from now on."""
        self.secret_keys.add(key)
        return key

    def findings_as_lines(self) -> list[str]:
        return [f"{f.kind} in {f.source}: ...{f.excerpt}..." for f in self.findings]

    @contextmanager
    def expecting_leaks(self) -> Iterator[list[Finding]]:
        """For tests that leak on purpose: the findings made inside are handed to the test
        and kept out of the session's verdict."""
        before = len(self.findings)
        caught: list[Finding] = []
        try:
            yield caught
        finally:
            caught += self.findings[before:]
            del self.findings[before:]


SCANNER = Scanner()
