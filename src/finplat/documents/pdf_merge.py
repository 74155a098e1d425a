"""Merge PDFs and images, in the given order, into one PDF."""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image
from pypdf import PdfReader, PdfWriter

from finplat.documents.file_types import FileType, IdentifiedFile


@dataclass(frozen=True)
class MergedPdf:
    data: bytes
    page_count: int


def merge(files: Sequence[tuple[IdentifiedFile, bytes]]) -> MergedPdf:
    """One PDF with every page of every file, in order; each image becomes one page.

    The files must already be identified (`file_types.identify`), so they parse.
    """
    writer = PdfWriter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for identified, data in files:
            pdf = data if identified.type is FileType.PDF else image_to_pdf(data)
            writer.append(PdfReader(io.BytesIO(pdf)))
        out = io.BytesIO()
        writer.write(out)
    return MergedPdf(out.getvalue(), len(writer.pages))


def image_to_pdf(data: bytes) -> bytes:
    """A one-page PDF showing the image (transparency flattened onto white)."""
    with Image.open(io.BytesIO(data)) as image:
        if image.mode in ("RGBA", "LA", "P"):
            rgba = image.convert("RGBA")
            page = Image.new("RGB", rgba.size, (255, 255, 255))
            page.paste(rgba, mask=rgba.getchannel("A"))
        else:
            page = image.convert("RGB")
        out = io.BytesIO()
        page.save(out, format="PDF", resolution=72.0)
    return out.getvalue()
