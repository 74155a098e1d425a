"""Identify an upload as PDF, JPEG or PNG from its bytes, never from its name or content type.

Two checks, both required: the format's magic number at the start of the file, and a real
parse (pypdf for PDFs, a full Pillow decode for images). So a text file renamed to `.pdf`, a
truncated image or a PDF without pages is refused. Encrypted PDFs are refused too: they cannot
be merged or read by the provider's reviewers.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass
from enum import StrEnum

from PIL import Image, UnidentifiedImageError
from pypdf import PdfReader
from pypdf.errors import PyPdfError

# An image larger than this is refused rather than decoded (a decompression bomb guard).
MAX_IMAGE_PIXELS = 40_000_000


class FileType(StrEnum):
    PDF = "PDF"
    JPEG = "JPEG"
    PNG = "PNG"

    @property
    def media_type(self) -> str:
        return _MEDIA_TYPES[self]


_MEDIA_TYPES = {
    FileType.PDF: "application/pdf",
    FileType.JPEG: "image/jpeg",
    FileType.PNG: "image/png",
}

_MAGIC: tuple[tuple[bytes, FileType], ...] = (
    (b"%PDF-", FileType.PDF),
    (b"\xff\xd8\xff", FileType.JPEG),
    (b"\x89PNG\r\n\x1a\n", FileType.PNG),
)

# What each use accepts (spec, "Limits").
PROOF_OF_ADDRESS_TYPES = frozenset({FileType.PDF, FileType.JPEG, FileType.PNG})
VERIFICATION_DOCUMENT_TYPES = frozenset({FileType.PDF, FileType.JPEG, FileType.PNG})


@dataclass(frozen=True)
class IdentifiedFile:
    type: FileType
    pages: int  # pages of a PDF; 1 for an image


class UnreadableFile(ValueError):
    """The bytes are not a complete, readable file of an accepted type."""


def identify(data: bytes, allowed: frozenset[FileType]) -> IdentifiedFile:
    """The type of `data` if it is one of `allowed` and parses completely; else
    `UnreadableFile` with a reason safe to show to the caller."""
    claimed = next((kind for magic, kind in _MAGIC if data.startswith(magic)), None)
    if claimed is None:
        raise UnreadableFile("Not a PDF, JPEG or PNG file.")
    if claimed not in allowed:
        names = ", ".join(sorted(kind.value for kind in allowed))
        raise UnreadableFile(f"A {claimed.value} file is not accepted here; accepted: {names}.")
    if claimed is FileType.PDF:
        return IdentifiedFile(FileType.PDF, _pdf_pages(data))
    _check_image(data, claimed)
    return IdentifiedFile(claimed, 1)


def _pdf_pages(data: bytes) -> int:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = PdfReader(io.BytesIO(data), strict=True)
            if reader.is_encrypted:
                raise UnreadableFile("Encrypted PDF files are not accepted.")
            pages = len(reader.pages)
            for page in reader.pages:
                page.mediabox  # noqa: B018 - every page must resolve
    except UnreadableFile:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError, RecursionError):
        raise UnreadableFile("The PDF file is damaged or incomplete.") from None
    if pages == 0:
        raise UnreadableFile("The PDF file has no pages.")
    return pages


def _check_image(data: bytes, claimed: FileType) -> None:
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format != claimed.value:
                raise UnreadableFile(f"The file is not a valid {claimed.value} image.")
            width, height = image.size
            if width * height > MAX_IMAGE_PIXELS:
                raise UnreadableFile("The image is too large.")
            image.load()  # decode every byte: a truncated image fails here
    except UnreadableFile:
        raise
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        raise UnreadableFile(f"The {claimed.value} image is damaged or incomplete.") from None
