from __future__ import annotations

from finplat.documents.file_types import PROOF_OF_ADDRESS_TYPES, identify
from finplat.documents.pdf_merge import merge
from tests.documents import samples


def _merged(*files: bytes) -> tuple[bytes, int]:
    result = merge([(identify(data, PROOF_OF_ADDRESS_TYPES), data) for data in files])
    return result.data, result.page_count


def test_pages_follow_the_order_of_the_files() -> None:
    data, count = _merged(
        samples.png(101, 40), samples.pdf(202, 203), samples.jpeg(304, 40), samples.pdf(405)
    )
    assert count == 5
    assert samples.page_widths(data) == [101, 202, 203, 304, 405]


def test_one_pdf_stays_the_same_pages() -> None:
    data, count = _merged(samples.pdf(111, 222))
    assert (count, samples.page_widths(data)) == (2, [111, 222])


def test_a_transparent_png_becomes_a_page() -> None:
    data, count = _merged(samples.transparent_png(77, 20))
    assert (count, samples.page_widths(data)) == (1, [77])


def test_the_merged_file_is_itself_an_accepted_pdf() -> None:
    data, _ = _merged(samples.png(), samples.jpeg())
    assert identify(data, PROOF_OF_ADDRESS_TYPES).pages == 2
