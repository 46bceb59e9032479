"""Issue 12, item 16: hostile names and messages cannot add Markdown structure.

Carriage returns, line feeds, pipes, backticks, link and image syntax, autolinks and HTML in a
benchmark name, implementation, parameter, warning or error must leave the rendered Markdown of
``run --markdown`` and ``compare --markdown`` with exactly its own table rows and headings and
no image, link, HTML or code. Rendered with markdown-it-py (CommonMark with GFM tables).
"""

from __future__ import annotations

import pytest
from hostile_text import ALL, MARKDOWN, hostile_results
from markdown_it import MarkdownIt

from steadybench.cli import main
from steadybench.output.files import results_to_markdown
from steadybench.output.format import markdown_text
from steadybench.output.results_io import write_results

#: token types that hostile text must never produce
FORBIDDEN = {"image", "link_open", "html_inline", "html_block", "code_inline", "code_block",
             "fence", "blockquote_open", "hr", "bullet_list_open", "ordered_list_open",
             "heading_open", "s_open"}


def _tokens(text: str) -> list:
    """Every token of the rendered document, inline children included."""
    out = []
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        out.append(token)
        out.extend(token.children or [])
    return out


def _structure(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for token in _tokens(text):
        counts[token.type] = counts.get(token.type, 0) + 1
    return counts


def _row_cells(text: str) -> list[int]:
    """Cells per table row (header included)."""
    cells, rows = 0, []
    for token in _tokens(text):
        if token.type == "tr_open":
            cells = 0
        elif token.type in ("th_open", "td_open"):
            cells += 1
        elif token.type == "tr_close":
            rows.append(cells)
    return rows


@pytest.mark.parametrize("name", ALL)
def test_markdown_text_is_one_inert_cell(name):
    cell = markdown_text(name)
    assert "\n" not in cell and "\r" not in cell
    document = f"| a | b |\n|---|---|\n| {cell} | x |\n"
    counts = _structure(document)
    assert not FORBIDDEN & set(counts), (name, cell, counts)
    assert _row_cells(document) == [2, 2], (name, cell)
    # and as the start of a list item (the Warnings section of run --markdown)
    item = _structure(f"- {cell}\n")
    assert not (FORBIDDEN - {"bullet_list_open"}) & set(item), (name, cell, item)
    assert item.get("bullet_list_open") == 1


def test_run_markdown_has_only_its_own_structure():
    results = hostile_results()
    text = results_to_markdown(results)
    counts = _structure(text)
    # the title and "## Warnings" are the only headings; one list for the environment, one for
    # the warnings; nothing else
    assert counts.get("heading_open") == 2, counts
    assert counts.get("bullet_list_open") == 2, counts
    assert not (FORBIDDEN - {"heading_open", "bullet_list_open"}) & set(counts), counts
    assert _row_cells(text) == [14] * (1 + len(results.cases))
    assert counts.get("list_item_open") == 2 + len(results.cases)


def test_compare_markdown_has_only_its_own_structure(tmp_path, capsys):
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    write_results(hostile_results(MARKDOWN), base)
    write_results(hostile_results(MARKDOWN), new)
    out = tmp_path / "cmp.md"
    assert main(["compare", str(base), str(new), "--markdown", str(out), "--quiet"]) == 0, \
        capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    counts = _structure(text)
    assert not (FORBIDDEN - {"bullet_list_open"}) & set(counts), counts
    rows = _row_cells(text)
    assert len(rows) == 1 + len(MARKDOWN) and set(rows) == {7}, rows
