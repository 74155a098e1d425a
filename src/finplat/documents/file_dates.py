"""The latest date a file records about itself: a PDF's metadata (`/CreationDate`,
`/ModDate`), an image's EXIF (`DateTime`, `DateTimeOriginal`, `DateTimeDigitized`).

A document is issued no later than the last time its file was written, so that date bounds the
issue date from above: a file last written four months ago cannot hold last month's bill. It
proves nothing the other way (a bill scanned today may be a year old). A date after today means
the writer's clock was wrong, and then no date of the file is trusted. Unreadable or malformed
dates are ignored: the file's type and integrity are checked elsewhere (`file_types.identify`).
"""

from __future__ import annotations

import io
import re
import warnings
from datetime import UTC, date, datetime, timedelta, timezone

from PIL import Image, UnidentifiedImageError
from pypdf import PdfReader
from pypdf.errors import PyPdfError

from finplat.documents.file_types import FileType

_PDF_DATE_KEYS = ("/CreationDate", "/ModDate")
_PDF_DATE = re.compile(
    r"D:(\d{4})(\d{2})(\d{2})(?:(\d{2})(?:(\d{2})(\d{2})?)?)?(Z|z|[+-]\d{2}(?:'?\d{2}'?)?)?"
)
_EXIF_DATE_TIME = 0x0132
_EXIF_IFD = 0x8769
_EXIF_ORIGINAL = 0x9003
_EXIF_DIGITIZED = 0x9004


def latest_recorded_date(data: bytes, kind: FileType, *, today: date) -> date | None:
    """The latest date the file records about itself; None when it records none, or one
    after `today`."""
    recorded = _pdf_dates(data) if kind is FileType.PDF else _image_dates(data)
    if not recorded or max(recorded) > today:
        return None
    return max(recorded)


def _pdf_dates(data: bytes) -> list[date]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            metadata = PdfReader(io.BytesIO(data)).metadata
            raw = [] if metadata is None else [metadata.get(k) for k in _PDF_DATE_KEYS]
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError, RecursionError):
        return []
    return [day for value in raw if isinstance(value, str) and (day := _pdf_day(value))]


def _pdf_day(text: str) -> date | None:
    """The day of a PDF date string (`D:YYYYMMDDHHmmSSOHH'mm'`), in UTC when it has a time
    and an offset. A date without its day (`D:2026`) says too little: pypdf would read it as
    the first of January, which could make a recent file look old."""
    match = _PDF_DATE.match(text)
    if match is None:
        return None
    year, month, day, hour, minute, second, offset = match.groups()
    try:
        written = datetime(
            int(year), int(month), int(day), int(hour or 0), int(minute or 0), int(second or 0)
        )
        if hour is None or offset is None or offset in ("Z", "z"):
            return written.date()
        digits = offset[1:].replace("'", "")
        shift = timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
        zone = timezone(shift if offset[0] == "+" else -shift)
    except ValueError:  # no such day, or an offset of a day or more
        return None
    return written.replace(tzinfo=zone).astimezone(UTC).date()


def _image_dates(data: bytes) -> list[date]:
    try:
        with Image.open(io.BytesIO(data)) as image:
            exif = image.getexif()
            values = [exif.get(_EXIF_DATE_TIME)]
            inner = exif.get_ifd(_EXIF_IFD)
            values += [inner.get(_EXIF_ORIGINAL), inner.get(_EXIF_DIGITIZED)]
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, KeyError, TypeError):
        return []
    found = []
    for value in values:
        if isinstance(value, bytes):
            value = value.decode("ascii", "replace")
        if not isinstance(value, str):
            continue
        try:
            found.append(datetime.strptime(value.strip()[:10], "%Y:%m:%d").date())
        except ValueError:
            continue  # "0000:00:00" and other placeholders
    return found
