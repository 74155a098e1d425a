"""Importing past transactions from a CSV file under an import configuration.

The file's first line names the columns (any order, any letter case): `TransactionId`,
`UserId`, `Mid`, `Amount`, `Currency`, `OccurredAt`. Every row is checked before anything is
written: one bad row refuses the whole file, naming the row. Each row becomes an award under
the configuration's programme, keyed by its `TransactionId` within the configuration: a row
already imported with the same content is left as it is (importing a file again changes
nothing), with other content it is a bad row.
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation

from sqlalchemy.ext.asyncio import AsyncSession

from finplat.kit.clock import utcnow
from finplat.kit.money import ExcessPrecision, Money, UnknownCurrency
from finplat.loyalty import points
from finplat.loyalty.errors import ImportConfigNotFound, InvalidImportFile, ProgramInactive
from finplat.loyalty.models import AwardSource, LoyaltyAward, LoyaltyProgramStatus, PointsRule
from finplat.loyalty.repository import (
    AwardRepository,
    ImportConfigRepository,
    MidRepository,
    company_user_ids,
)
from finplat.loyalty.service import find_program

COLUMNS = ("TransactionId", "UserId", "Mid", "Amount", "Currency", "OccurredAt")
MAX_ROWS = 10_000
MAX_PROBLEMS = 20
_TRANSACTION_ID = re.compile(r"^[A-Za-z0-9_.:\-]{1,64}$")
_MID = re.compile(r"^[A-Za-z0-9_\-]{1,32}$")
_USER_ID = re.compile(r"^[1-9][0-9]{0,15}$")
_AMOUNT = re.compile(r"^[0-9]+(\.[0-9]+)?$")


@dataclass(frozen=True)
class RowProblem:
    row: int  # 1-based, the header not counted
    line: int  # the file's line
    field: str
    message: str

    def sentence(self) -> str:
        return f"Row {self.row} (line {self.line}), {self.field}: {self.message}"


class BadImportFile(InvalidImportFile):
    def __init__(self, problems: list[RowProblem], message: str | None = None) -> None:
        first = problems[0] if problems else None
        rows: dict[str, list[str]] = {}
        for p in problems:
            rows.setdefault(f"Row {p.row} (line {p.line})", []).append(f"{p.field}: {p.message}")
        super().__init__(
            message or (first.sentence() if first else InvalidImportFile.message),
            validation_errors=rows or None,
        )
        self.problems = problems


@dataclass(frozen=True)
class ImportRow:
    row: int
    line: int
    transaction_id: str
    user_id: int
    mid: str
    money: Money
    occurred_at: datetime

    @property
    def digest(self) -> str:
        text = "|".join(
            (
                self.transaction_id,
                str(self.user_id),
                self.mid,
                str(self.money.minor),
                self.money.currency,
                self.occurred_at.isoformat(),
            )
        )
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class ImportResult:
    config_id: int
    program_id: int
    rows: int
    imported: int
    unchanged: int
    points: int


def _file_problem(message: str) -> BadImportFile:
    return BadImportFile([], message=message)


def parse(data: bytes, *, delimiter: str) -> list[tuple[int, int, dict[str, str]]]:
    """(row, line, {column: text}) of each data row; a file that is not a readable CSV with
    the columns is refused as a whole."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _file_problem("The file is not UTF-8 text.") from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise _file_problem("The file is empty: a header line and rows are expected.")
        names = {c.lower(): c for c in COLUMNS}
        columns = [names.get(h.strip().lower(), h) for h in header]
        missing = [c for c in COLUMNS if c not in columns]
        unknown = [c for c in columns if c not in COLUMNS]
        if missing or unknown or len(set(columns)) != len(columns):
            raise _file_problem(
                f"The header line must name the columns {', '.join(COLUMNS)} once each "
                f"(missing: {', '.join(missing) or 'none'}; "
                f"unknown: {', '.join(unknown) or 'none'})."
            )
        rows: list[tuple[int, int, dict[str, str]]] = []
        for cells in reader:
            if not cells or all(not c.strip() for c in cells):
                continue
            if len(rows) >= MAX_ROWS:
                raise _file_problem(f"The file has more than {MAX_ROWS} rows.")
            line = reader.line_num
            if len(cells) != len(columns):
                problem = RowProblem(
                    len(rows) + 1, line, "Row", f"Has {len(cells)} cells, {len(columns)} expected."
                )
                raise BadImportFile([problem])
            rows.append((len(rows) + 1, line, dict(zip(columns, cells, strict=True))))
    except csv.Error as exc:
        raise _file_problem(
            f"The file is not readable CSV (line {reader.line_num}): {exc}."
        ) from None
    if not rows:
        raise _file_problem("The file has no rows.")
    return rows


def _row(row: int, line: int, cells: dict[str, str]) -> tuple[ImportRow | None, list[RowProblem]]:
    problems: list[RowProblem] = []

    def bad(field: str, message: str) -> None:
        problems.append(RowProblem(row, line, field, message))

    transaction_id = cells["TransactionId"].strip()
    if not _TRANSACTION_ID.match(transaction_id):
        bad("TransactionId", "Must be 1 to 64 letters, digits or _ . : -.")
    user_text = cells["UserId"].strip()
    user_id = int(user_text) if _USER_ID.match(user_text) else 0
    if not user_id or user_id > 2**53 - 1:
        bad("UserId", "Must be a user's Id.")
    mid = cells["Mid"].strip()
    if not _MID.match(mid):
        bad("Mid", "Must be 1 to 32 letters, digits, _ or -.")
    money = None
    amount_text, currency = cells["Amount"].strip(), cells["Currency"].strip()
    try:
        amount = Decimal(amount_text) if _AMOUNT.match(amount_text) else None
        if amount is None or amount <= 0:
            bad("Amount", "Must be a positive decimal amount, such as 12.50.")
        else:
            money = Money.of(amount, currency)
    except UnknownCurrency:
        bad("Currency", "Not a supported currency code.")
    except (ExcessPrecision, InvalidOperation) as exc:
        bad("Amount", str(exc))
    occurred_at = _instant(cells["OccurredAt"].strip())
    if occurred_at is None:
        bad(
            "OccurredAt",
            "Must be an ISO 8601 date-time with its offset, such as 2026-01-31T12:00:00Z.",
        )
    elif occurred_at > utcnow():
        bad("OccurredAt", "Must not be in the future.")
    if problems or money is None or occurred_at is None:
        return None, problems
    return ImportRow(row, line, transaction_id, user_id, mid, money, occurred_at), []


def _instant(text: str) -> datetime | None:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    if value.tzinfo is None or "T" not in text:
        return None
    return value.astimezone(UTC)


async def import_file(
    session: AsyncSession, *, company_id: int, config_id: int, data: bytes
) -> ImportResult:
    config = await ImportConfigRepository(session, company_id).locked(config_id)
    if config is None:
        raise ImportConfigNotFound()
    program = await find_program(session, company_id=company_id, program_id=config.program_id)
    if program.status != LoyaltyProgramStatus.ACTIVE.value:
        raise ProgramInactive()
    rows: list[ImportRow] = []
    problems: list[RowProblem] = []
    seen: dict[str, ImportRow] = {}
    for row, line, cells in parse(data, delimiter=config.delimiter):
        parsed, found = _row(row, line, cells)
        problems += found
        if parsed is None:
            continue
        earlier = seen.get(parsed.transaction_id)
        if earlier is not None and earlier.digest != parsed.digest:
            problems.append(
                RowProblem(
                    row, line, "TransactionId", f"Also on row {earlier.row} with other values."
                )
            )
            continue
        if earlier is None:
            seen[parsed.transaction_id] = parsed
            rows.append(parsed)
    users = await company_user_ids(session, company_id, sorted({r.user_id for r in rows}))
    mids = await MidRepository(session, company_id).by_mids(sorted({r.mid for r in rows}))
    awards = AwardRepository(session, company_id)
    imported = await awards.imported(config.id, [r.transaction_id for r in rows])
    for r in rows:
        if r.user_id not in users:
            problems.append(
                RowProblem(r.row, r.line, "UserId", "No user of the company has this Id.")
            )
        if r.mid not in mids:
            problems.append(
                RowProblem(r.row, r.line, "Mid", "No merchant of the company has this MID.")
            )
        if imported.get(r.transaction_id, r.digest) != r.digest:
            problems.append(
                RowProblem(r.row, r.line, "TransactionId", "Already imported with other values.")
            )
    if problems:
        problems.sort(key=lambda p: (p.row, COLUMNS.index(p.field) if p.field in COLUMNS else -1))
        raise BadImportFile(problems[:MAX_PROBLEMS])
    new = [r for r in rows if r.transaction_id not in imported]
    rule = PointsRule(program.points_rule)
    earned = 0
    for r in new:
        award_points = points.earned(
            rule, program.points_rate, paid_minor=r.money.minor, currency=r.money.currency
        )
        earned += award_points
        session.add(
            LoyaltyAward(
                company_id=company_id,
                program_id=program.id,
                merchant_id=mids[r.mid].merchant_id,
                user_id=r.user_id,
                source=AwardSource.IMPORTED.value,
                import_config_id=config.id,
                external_id=r.transaction_id,
                digest=r.digest,
                mid=r.mid,
                currency=r.money.currency,
                paid_minor=r.money.minor,
                points_rule=program.points_rule,
                points_rate=program.points_rate,
                points=award_points,
                occurred_at=r.occurred_at,
            )
        )
    await session.flush()
    return ImportResult(
        config_id=config.id,
        program_id=program.id,
        rows=len(rows),
        imported=len(new),
        unchanged=len(rows) - len(new),
        points=earned,
    )
