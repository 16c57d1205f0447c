"""No mix of page constructs stops a build or a run.

``units`` runs on every chunk twice: when the retriever writes a chunk's unit
vectors (ingestion) and when the extractive generator answers from it. A page
that made it raise failed its whole build, and every question whose passages
held it. Pages mix constructs in orders no example test lists, so this test
draws thousands of mixes (seeded, the same every run) of the lines help centres
write, including the half-finished ones (an empty item, an unclosed fence).
"""

from __future__ import annotations

import random

from ragway.chunking import chunk_blocks
from ragway.parsing import parse_html, parse_markdown
from ragway.units import split_sentences, units

LINES = (
    "1. Open Settings.", "2. Click Save", "- item", "* item", "  - nested item",
    "    indented code", "", "", "", ":::tip", ":::", '!!! note "Title"', "??? faq", "> a quote",
    "> [!NOTE]", "| Plan | Price |", "|---|---|", "| Pro | $10 |", "Plan | Price", "--- | ---",
    "```", "```bash", "# Title", "## How do I pay?", "**Label:** value", "A hard break  ",
    "A sentence.", "Q: What is it?", "A: It is.", "[docs]: https://example.com", "[^1]: a note",
    "* Footnote", "<br>", "<dl><dt>Term</dt><dd>Definition</dd></dl>", "<!-- a comment -->",
    "Term", ": definition", "\u2022 bullet", "\u2013 dash item", "1) paren item",
    "   3. deep item", "\t- tab item", "|", "||", "| |", "-", "1.", "\\",
    "<details><summary>Why?</summary>", "</details>", "---", "===", "~~~", "- ![](shot.png)",
    '1. <img src="a.png">',
)  # fmt: skip


TAGS = (
    "<ol>", "</ol>", "<ul>", "</ul>", "<li>", "</li>", "<dl>", "</dl>", "<dt>", "</dt>", "<dd>",
    "</dd>", "<table>", "</table>", "<tr>", "</tr>", "<td>", "</td>", "<th>", "</th>", "<p>",
    "</p>", "<h2>", "</h2>", "<pre>", "</pre>", "<br>", "<details>", "<summary>", "</summary>",
    "</details>", "<blockquote>", "</blockquote>", "<code>", "</code>", "<!-- c -->", "&amp;",
    "Some words", "Step 1.", "| a |", "- x", "1. y", "\n", "\n\n", "**bold**",
)  # fmt: skip


def test_no_mix_of_page_lines_makes_parsing_or_units_raise() -> None:
    rng = random.Random(2026)
    for _ in range(3000):
        page = "\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 14)))
        for unit in units(page):
            assert unit.text.strip(), page
            split_sentences(unit.text)
        for piece in chunk_blocks("doc", "Title", parse_markdown(page).blocks, max_words=40):
            units(piece.text)
        parse_html(page)


def test_no_mix_of_html_tags_makes_parsing_or_units_raise() -> None:
    rng = random.Random(2026)
    for _ in range(3000):
        html = "".join(rng.choice(TAGS) for _ in range(rng.randint(1, 25)))
        # As an HTML page, and pasted into a Markdown page.
        for parsed in (parse_html(html), parse_markdown(f"Intro\n\n{html}\n\nAfter")):
            for piece in chunk_blocks("doc", "Title", parsed.blocks, max_words=30):
                assert all(unit.text.strip() for unit in units(piece.text)), html
