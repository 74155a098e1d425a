from __future__ import annotations

import pytest

from finplat.documents.file_types import (
    PROOF_OF_ADDRESS_TYPES,
    FileType,
    IdentifiedFile,
    UnreadableFile,
    identify,
)
from tests.documents import samples

ALL = PROOF_OF_ADDRESS_TYPES


def test_a_pdf_is_identified_with_its_page_count() -> None:
    assert identify(samples.pdf(100, 120, 140), ALL) == IdentifiedFile(FileType.PDF, 3)


def test_a_png_is_identified_as_one_page() -> None:
    assert identify(samples.png(), ALL) == IdentifiedFile(FileType.PNG, 1)


def test_a_jpeg_is_identified_as_one_page() -> None:
    assert identify(samples.jpeg(), ALL) == IdentifiedFile(FileType.JPEG, 1)


def test_a_text_file_is_refused() -> None:
    with pytest.raises(UnreadableFile, match="Not a PDF, JPEG or PNG"):
        identify(b"just some text, named statement.pdf", ALL)


def test_text_behind_a_pdf_magic_number_is_refused() -> None:
    with pytest.raises(UnreadableFile, match="damaged"):
        identify(b"%PDF-1.7\nthis is not really a PDF at all\n", ALL)


def test_a_truncated_png_is_refused() -> None:
    data = samples.png(200, 200)
    with pytest.raises(UnreadableFile, match="PNG image is damaged"):
        identify(data[: len(data) // 2], ALL)


def test_a_truncated_jpeg_is_refused() -> None:
    data = samples.jpeg(200, 200)
    with pytest.raises(UnreadableFile, match="JPEG image is damaged"):
        identify(data[: len(data) // 2], ALL)


def test_a_truncated_pdf_is_refused() -> None:
    data = samples.pdf(100, 100)
    with pytest.raises(UnreadableFile):
        identify(data[: len(data) // 3], ALL)


def test_a_type_outside_the_allowed_set_is_refused() -> None:
    with pytest.raises(UnreadableFile, match="not accepted here"):
        identify(samples.png(), frozenset({FileType.PDF}))


def test_an_empty_file_is_refused() -> None:
    with pytest.raises(UnreadableFile):
        identify(b"", ALL)


def test_media_types_are_the_registered_ones() -> None:
    assert [t.media_type for t in FileType] == ["application/pdf", "image/jpeg", "image/png"]
