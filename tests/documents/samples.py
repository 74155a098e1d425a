"""Small real files for upload tests. Each page's width identifies it, so page order can be
read back from a merged PDF."""

from __future__ import annotations

import io

from PIL import Image
from pypdf import PdfReader, PdfWriter


def png(width: int = 40, height: int = 30, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, format="PNG")
    return out.getvalue()


def transparent_png(width: int = 40, height: int = 30) -> bytes:
    out = io.BytesIO()
    Image.new("RGBA", (width, height), (0, 0, 255, 128)).save(out, format="PNG")
    return out.getvalue()


def jpeg(width: int = 40, height: int = 30) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 10)).save(out, format="JPEG")
    return out.getvalue()


def pdf(*widths: int, height: int = 50) -> bytes:
    """A PDF with one blank page per width (default: one page 100 wide)."""
    writer = PdfWriter()
    for width in widths or (100,):
        writer.add_blank_page(width=width, height=height)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pdf_written(*dates: str) -> bytes:
    """A one-page PDF whose metadata records `dates` as its creation (and modification) date,
    in the PDF date format (`D:20260801120000Z`)."""
    writer = PdfWriter()
    writer.add_blank_page(width=100, height=50)
    writer.add_metadata(dict(zip(("/CreationDate", "/ModDate"), dates, strict=False)))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def jpeg_taken(moment: str, tag: int = 0x9003) -> bytes:
    """A JPEG whose EXIF records `moment` (`2026:08:01 12:00:00`) under `tag` (default
    DateTimeOriginal, in the Exif IFD; 0x0132 is DateTime, in the main IFD)."""
    exif = Image.Exif()
    if tag == 0x0132:
        exif[tag] = moment
    else:
        exif.get_ifd(0x8769)[tag] = moment
    out = io.BytesIO()
    Image.new("RGB", (40, 30), (10, 120, 10)).save(out, format="JPEG", exif=exif)
    return out.getvalue()


def page_widths(data: bytes) -> list[int]:
    return [round(float(page.mediabox.width)) for page in PdfReader(io.BytesIO(data)).pages]


def ascii_pdf(*widths: int) -> str:
    """A PDF that is plain ASCII text (pypdf's binary marker comment replaced by letters of
    the same length, so every offset stays right): for tools that only carry strings."""
    return pdf(*widths).replace(b"\xe2\xe3\xcf\xd3", b"abcd", 1).decode("ascii")
