from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_server_web.fetch.pages import slice_page


def all_pages(document: str, max_length: int) -> list[str]:
    pages, start = [], 0
    while True:
        page = slice_page(document, start, max_length)
        pages.append(page.text)
        assert page.total_length == len(document)
        if page.next_start_index is None:
            return pages
        assert page.next_start_index > start  # always progresses
        start = page.next_start_index


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab .\n\né字🙂"), max_size=3000), st.integers(1, 400))
def test_pages_concatenate_to_the_document(document: str, max_length: int) -> None:
    pages = all_pages(document, max_length)
    assert "".join(pages) == document
    assert all(len(p) <= max_length for p in pages)


def test_cuts_on_paragraph_boundary_when_one_is_near() -> None:
    document = "First paragraph is here.\n\nSecond paragraph follows and is long enough to cut."
    page = slice_page(document, 0, 40)
    assert page.text == "First paragraph is here.\n\n"
    assert page.next_start_index == len(page.text)


def test_hard_cut_when_no_boundary() -> None:
    page = slice_page("x" * 100, 0, 30)
    assert page.text == "x" * 30 and page.next_start_index == 30
