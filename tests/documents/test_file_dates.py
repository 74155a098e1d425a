"""The latest date a file records about itself bounds the issue date of what it holds."""

from __future__ import annotations

from datetime import date

import pytest

from finplat.documents.file_dates import latest_recorded_date
from finplat.documents.file_types import FileType
from tests.documents import samples

TODAY = date(2026, 11, 26)


def test_a_pdf_records_the_later_of_its_creation_and_modification_dates() -> None:
    data = samples.pdf_written("D:20260501090000Z", "D:20260720101500+02'00'")
    assert latest_recorded_date(data, FileType.PDF, today=TODAY) == date(2026, 7, 20)


def test_a_pdf_date_with_an_offset_is_read_as_its_utc_day() -> None:
    data = samples.pdf_written("D:20260801233000-05'00'")
    assert latest_recorded_date(data, FileType.PDF, today=TODAY) == date(2026, 8, 2)


@pytest.mark.parametrize(
    "dates", [(), ("garbage",), ("D:2026",), ("D:20261301",), ("D:20260801120000+99'00'",)]
)
def test_a_pdf_without_a_readable_date_records_none(dates: tuple[str, ...]) -> None:
    assert latest_recorded_date(samples.pdf_written(*dates), FileType.PDF, today=TODAY) is None


def test_a_date_after_today_means_a_wrong_clock_and_records_nothing() -> None:
    data = samples.pdf_written("D:20260101000000Z", "D:20270101000000Z")
    assert latest_recorded_date(data, FileType.PDF, today=TODAY) is None


@pytest.mark.parametrize("tag", [0x9003, 0x9004, 0x0132])
def test_a_jpeg_records_its_exif_dates(tag: int) -> None:
    data = samples.jpeg_taken("2026:06:15 08:30:00", tag)
    assert latest_recorded_date(data, FileType.JPEG, today=TODAY) == date(2026, 6, 15)


def test_an_image_without_exif_records_none() -> None:
    assert latest_recorded_date(samples.png(), FileType.PNG, today=TODAY) is None
    assert latest_recorded_date(samples.jpeg(), FileType.JPEG, today=TODAY) is None


def test_an_exif_placeholder_date_records_none() -> None:
    data = samples.jpeg_taken("0000:00:00 00:00:00")
    assert latest_recorded_date(data, FileType.JPEG, today=TODAY) is None
