"""Parsing every format into blocks, and chunking that follows structure before size."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragway.chunking import chunk_blocks, duplicate_rate, pack
from ragway.kb import Defaults, DocumentError, build_document, parse_document
from ragway.parsing import Block, ParseError, parse, parse_html, parse_markdown, pdf_text
from ragway.units import units

MD = """# Guide

Intro paragraph.

## Install

- step one
- step two
  continued

| Port | Service |
| --- | --- |
| 7101 | retriever |
| 7103 | ingest |

```bash
make up
# not a heading
```
"""


def test_markdown_blocks_keep_their_kind_and_source() -> None:
    blocks = parse_markdown(MD).blocks
    assert [b.kind for b in blocks] == [
        "heading",
        "paragraph",
        "heading",
        "list",
        "table",
        "code",
    ]
    lst, table, code = blocks[3], blocks[4], blocks[5]
    assert lst.units == ("- step one", "- step two\n  continued")
    assert table.header == "| Port | Service |\n| --- | --- |"
    assert table.units == ("| 7101 | retriever |", "| 7103 | ingest |")
    assert code.text.startswith("```bash") and "# not a heading" in code.text


def test_sections_carry_the_heading_path_and_ids_are_stable() -> None:
    doc = build_document("markdown", MD.encode(), {}, Defaults(), fallback_id="guide")
    assert [(c.chunk_id, c.section) for c in doc.chunks] == [
        ("guide#intro", ""),
        ("guide#install", "Install"),
    ]
    again = build_document("markdown", MD.encode(), {}, Defaults(), fallback_id="guide")
    assert [c.chunk_id for c in again.chunks] == [c.chunk_id for c in doc.chunks]


def test_a_long_table_splits_between_rows_and_every_piece_repeats_the_header() -> None:
    rows = "\n".join(f"| host-{n} | rack {n} holds the primary replica |" for n in range(40))
    text = f"# T\n\n## Hosts\n\n| Host | Note |\n| --- | --- |\n{rows}\n"
    doc = build_document("markdown", text.encode(), {}, Defaults(max_words=60), fallback_id="t")
    assert len(doc.chunks) > 3
    for c in doc.chunks:
        assert c.text.startswith("| Host | Note |\n| --- | --- |\n| host-")
        assert len(c.text.split()) <= 60 + 8
    body_rows = [line for c in doc.chunks for line in c.text.splitlines()[2:]]
    assert body_rows == rows.splitlines()  # every row once, in order


def test_a_split_table_repeats_its_second_header_row_in_every_piece() -> None:
    # Before: only the first piece had "| | | Standard | Member |", so a later piece's
    # row read "Fee (AUD): $750; $675" and no column said which fee was a member's.
    rows = "\n".join(f"| {100 + n} | Service number {n} | ${n}0 | ${n}5 |" for n in range(40))
    header = "| Item | Service | Fee (AUD) | |\n|---|---|---|---|\n| | | Standard | Member |"
    text = f"# T\n\n## Fees\n\n{header}\n{rows}\n"
    doc = build_document("markdown", text.encode(), {}, Defaults(max_words=80), fallback_id="t")
    assert len(doc.chunks) > 3
    for c in doc.chunks:
        assert c.text.startswith(header + "\n| 1")
        last = units(c.text)[-1]
        assert [h for h, _ in last.cells[2:]] == ["Fee (AUD) Standard", "Fee (AUD) Member"]
    body_rows = [line for c in doc.chunks for line in c.text.splitlines()[3:]]
    assert body_rows == rows.splitlines()


FEES = """# Fees and charges

## Charges list

Most people never pay any of these. They're here so you know exactly what we charge, and
when. All amounts include VAT.

| Charge                    | Great Britain & NI        | When it applies                  |
|---------------------------|---------------------------|----------------------------------|
| Early termination charge* | £8.50 per remaining month | Leaving Fibre 40 before its end  |
| Late payment fee          | £7.50                     | A bill unpaid 14 days after date |
| Paper bill                | £1.50 per bill            | If you ask for printed bills†    |
| Hub not returned          | £75                       | Not back 30 days after it ends   |

\\* We never charge more than the monthly payments left on your contract. Homestead Lite
has no early termination charge.
† Free if you're registered blind or partially sighted.

Questions about a charge? Ask us within 30 days of the bill.
"""


def test_a_table_and_the_footnotes_under_it_stay_in_one_chunk() -> None:
    # The paragraph and the table fit in one chunk, the notes no more: packed apart,
    # the row "Early termination charge*" lost what its mark means and the note
    # alone ("We never charge more than…") no longer said which charge it qualifies.
    doc = build_document("markdown", FEES.encode(), {}, Defaults(max_words=110), fallback_id="f")
    assert len(doc.chunks) == 3
    table = next(c for c in doc.chunks if "| Early termination charge* |" in c.text)
    assert table.text.endswith(
        "has no early termination charge.\n† Free if you're registered blind or partially sighted."
    )
    assert "Questions about a charge?" not in table.text  # a paragraph, not a note
    rows = [u for u in units(table.text) if u.kind == "row"]
    assert rows[0].note.startswith("We never charge more than the monthly payments left")
    assert rows[2].note == "Free if you're registered blind or partially sighted."
    # The notes are read once: no chunk holds them without their table.
    holding = [c.chunk_id for c in doc.chunks if "We never charge" in c.text]
    assert holding == [table.chunk_id]


def test_a_table_split_into_pieces_gives_each_piece_the_notes_its_rows_point_to() -> None:
    rows = "\n".join(f"| Plan {n} | £{n}.00 |" for n in range(1, 31))
    text = (
        "# Plans\n\n| Plan | Price |\n| --- | --- |\n"
        + rows.replace("| Plan 3 |", "| Plan 3¹ |").replace("| Plan 28 |", "| Plan 28² |")
        + "\n\n¹ Plan 3 is only sold to charities.\n\n² Plan 28 ends in May.\n"
    )
    doc = build_document("markdown", text.encode(), {}, Defaults(max_words=60), fallback_id="p")
    assert len(doc.chunks) > 2
    for c in doc.chunks:
        assert c.text.startswith("| Plan | Price |")
        assert len(c.text.split()) <= 60
        assert ("¹ Plan 3 is only" in c.text) == ("| Plan 3¹ |" in c.text)
        assert ("² Plan 28 ends" in c.text) == ("| Plan 28² |" in c.text)
    body = [line for c in doc.chunks for line in c.text.splitlines()[2:] if line.startswith("| ")]
    assert len(body) == 30  # every row once


def test_a_paragraph_that_only_starts_like_a_note_is_not_taken_from_its_place() -> None:
    # "†" appears in no cell: the paragraph is not this table's note.
    table = "| Plan | Price |\n| --- | --- |\n| Go | £5 |"
    blocks = parse_markdown(f"# T\n\n{table}\n\n† Prices change in May.\n").blocks
    assert pack(blocks[1:], len(table.split())) == [table, "† Prices change in May."]


def test_long_lists_split_between_items_and_long_code_between_lines_refenced() -> None:
    items = "\n".join(f"- item {n} has several words in it" for n in range(30))
    code = "\n".join(f"echo line {n}" for n in range(60))
    text = f"# T\n\n## L\n\n{items}\n\n## C\n\n```sh\n{code}\n```\n"
    doc = build_document("markdown", text.encode(), {}, Defaults(max_words=50), fallback_id="t")
    lists = [c for c in doc.chunks if c.section == "L"]
    codes = [c for c in doc.chunks if c.section == "C"]
    assert len(lists) > 1 and all(c.text.startswith("- item") for c in lists)
    assert len(codes) > 1
    assert all(c.text.startswith("```sh\n") and c.text.endswith("\n```") for c in codes)
    assert [c.chunk_id for c in codes][:2] == ["t#c", "t#c-2"]


def test_a_long_paragraph_splits_between_sentences() -> None:
    sentence = "The replica catches up within one minute of a restart."
    text = "# T\n\n" + " ".join([sentence] * 30) + "\n"
    doc = build_document("markdown", text.encode(), {}, Defaults(max_words=40), fallback_id="t")
    assert len(doc.chunks) > 1
    assert all(c.text.endswith("restart.") for c in doc.chunks)


def test_small_blocks_pack_together_up_to_the_limit() -> None:
    blocks = [Block("paragraph", "one two three")] * 5
    assert pack(blocks, 7) == ["one two three\n\none two three"] * 2 + ["one two three"]


def test_html_becomes_headings_paragraphs_lists_tables_and_code_with_meta() -> None:
    html = """<html><head><title>Rules</title><style>p{}</style>
    <meta name="tenant" content="acme"><meta name="ragway:groups" content="staff, hr">
    </head><body><nav>Home | About</nav><h1>Rules</h1><p>First &amp; foremost.</p>
    <h2>Limits</h2><table><tr><th>City</th><th>Limit</th></tr><tr><td>Paris</td><td>180</td></tr></table>
    <ul><li>one</li><li>two<ul><li>nested</li></ul></li></ul><pre>x = 1
y = 2</pre><script>alert(1)</script></body></html>"""
    parsed = parse_html(html)
    assert parsed.title == "Rules"
    assert parsed.meta == {"tenant": "acme", "groups": ["staff", "hr"]}
    kinds = [(b.kind, b.text) for b in parsed.blocks]
    assert kinds[:3] == [
        ("heading", "Rules"),
        ("paragraph", "First & foremost."),
        ("heading", "Limits"),
    ]
    table = parsed.blocks[3]
    assert table.header == "| City | Limit |\n| --- | --- |"
    assert table.units == ("| Paris | 180 |",)
    assert parsed.blocks[4].text == "- one\n- two\n  - nested"
    assert parsed.blocks[5].text == "```\nx = 1\ny = 2\n```"
    assert "alert" not in str(kinds) and "Home" not in str(kinds)
    doc = build_document(
        "html", html.encode(), {}, Defaults(tenant=None, groups=()), fallback_id="r"
    )
    assert (doc.tenant, doc.groups, doc.title) == ("acme", ["staff", "hr"], "Rules")
    assert [c.section for c in doc.chunks] == ["", "Limits"]


def test_an_html_table_of_labelled_values_keeps_its_first_row_as_data() -> None:
    # No <th>, and the first row holds a number: before, it became the header and
    # the next row read "Phone — 9am to 5pm: 0800 111 222".
    html = (
        "<table><tr><td>Support hours</td><td>9am to 5pm</td></tr>"
        "<tr><td>Phone</td><td>0800 111 222</td></tr></table>"
    )
    table = parse_html(html).blocks[0]
    assert table.units == ("| Support hours | 9am to 5pm |", "| Phone | 0800 111 222 |")
    assert [u.text for u in units(table.text)] == [
        "Support hours — 9am to 5pm",
        "Phone — 0800 111 222",
    ]
    # Column names written in <td>s (a few words, no value) still head a wider table.
    named = parse_html(
        "<table><tr><td>Plan</td><td>Seats</td><td>Storage</td></tr>"
        "<tr><td>Team</td><td>25</td><td>1 TB</td></tr></table>"
    )
    assert [u.text for u in units(named.blocks[0].text)] == ["Team — Seats: 25; Storage: 1 TB"]
    # Two columns without a <th> are labels and values, whatever the first row says:
    # "How to pay" as a header named every other row's value "Lineside app, …".
    pairs = parse_html(
        "<table><tr><td>How to pay</td><td>Lineside app or pay machines (card only)</td></tr>"
        "<tr><td>Status page</td><td>status.tallyo.example</td></tr>"
        "<tr><td>Longest stay</td><td>14 days</td></tr></table>"
    )
    assert [u.text for u in units(pairs.blocks[0].text)] == [
        "How to pay — Lineside app or pay machines (card only)",
        "Status page — status.tallyo.example",
        "Longest stay — 14 days",
    ]


def test_an_html_paragraph_that_starts_with_an_asterisk_is_the_tables_footnote() -> None:
    html = """<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Team</td><td>$10*</td></tr></table>
    <p>* Billed annually.</p>"""
    blocks = parse_html(html).blocks
    assert blocks[1] == Block("paragraph", "\\* Billed annually.")
    row = units("\n\n".join(b.text for b in blocks))[0]
    assert (row.text, row.note) == ("Team — Price: $10*", "Billed annually.")


def test_html_table_spans_fill_their_columns_and_two_header_rows_read_as_one() -> None:
    # Before: "Price per seat" named one column, "Monthly | Annual" became a data row
    # ("Monthly — Price per seat: Annual") and the annual price had no column name.
    html = (
        "<table><tr><th rowspan=2>Plan</th><th colspan=2>Price per seat</th></tr>"
        "<tr><th>Monthly</th><th>Annual</th></tr>"
        "<tr><td>Team</td><td>$10</td><td>$8</td></tr>"
        "<tr><td rowspan=2>Pro</td><td>$20</td><td>$16</td></tr>"
        "<tr><td>$22</td><td>$18</td></tr></table>"
    )
    table = parse_html(html).blocks[0]
    assert [u.text for u in units(table.text)] == [
        "Team — Price per seat Monthly: $10; Price per seat Annual: $8",
        "Pro — Price per seat Monthly: $20; Price per seat Annual: $16",
        "Pro — Price per seat Monthly: $22; Price per seat Annual: $18",
    ]
    # A span past any sane size is cut, not laid out cell by cell.
    wide = parse_html("<table><tr><th colspan=999999>A</th></tr><tr><td>x</td></tr></table>")
    assert wide.blocks[0].header.count("---") == 50


def test_a_list_inside_an_html_cell_is_the_cells_words_kept_apart() -> None:
    # Before: "<li>SSO</li><li>Audit log</li>" read "SSOAudit log".
    html = (
        "<table><tr><th>Plan</th><th>Includes</th></tr>"
        "<tr><td>Pro</td><td><ul><li>SSO</li><li>Audit log</li></ul></td></tr>"
        "<tr><td>Team</td><td>Guests<br>Exports</td></tr></table><p>After the table.</p>"
    )
    blocks = parse_html(html).blocks
    assert blocks[0].units == ("| Pro | SSO; Audit log |", "| Team | Guests Exports |")
    assert blocks[1] == Block("paragraph", "After the table.")


def test_html_cells_and_rows_whose_end_tags_are_left_out_are_kept() -> None:
    table = parse_html("<table><tr><th>Plan<th>Seats<tr><td>Team<td>25<tr><td>Pro<td>100</table>")
    assert table.blocks[0].units == ("| Team | 25 |", "| Pro | 100 |")


def test_a_headings_attribute_list_is_not_part_of_its_name() -> None:
    parsed = parse_markdown("# Billing\n\n## Refunds {#refunds}\n\nRefunds take 5 days.\n")
    assert [b.text for b in parsed.blocks if b.kind == "heading"] == ["Billing", "Refunds"]


def test_an_accordions_summary_is_the_faqs_question_however_it_is_written() -> None:
    # Before: "The car park was full and I missed my train" was a paragraph, quoted
    # as an answer of its own, and the answer under it had no question as context.
    html = (
        "<details><summary>The car park was full and I missed my train</summary>"
        "<p>We're sorry. Car park capacity isn't covered by Delay Repay.</p></details>"
    )
    blocks = parse_html(html).blocks
    assert blocks[0] == Block("paragraph", "Q: The car park was full and I missed my train")
    found = units("\n\n".join(b.text for b in blocks))
    assert [u.text for u in found] == [
        "We're sorry.",
        "Car park capacity isn't covered by Delay Repay.",
    ]
    assert {u.asked for u in found} == {"The car park was full and I missed my train"}


def test_html_steps_keep_their_numbers_and_definitions_their_terms() -> None:
    html = """<h1>Export</h1><p>To export your data:</p>
    <ol><li>Open <b>Settings</b>.</li><li>Choose a format:<ul><li>CSV</li><li>JSON</li></ul>
    </li><li>Click <code>Start export</code>.</li></ol>
    <dl><dt>Export link lifetime</dt><dd>7 days</dd><dt>Max exports per day</dt><dd>3</dd></dl>"""
    blocks = parse_html(html).blocks
    # "What is the third step?" is asked by number: an <ol> keeps it.
    assert blocks[2].text == (
        "1. Open Settings.\n2. Choose a format:\n  - CSV\n  - JSON\n3. Click Start export."
    )
    # A term and its definition were glued into "lifetime7 daysMax": now one item each.
    assert blocks[3].kind == "list"
    assert blocks[3].units == ("- Export link lifetime: 7 days", "- Max exports per day: 3")


def test_html_items_keep_their_words_after_a_nested_list_and_without_closing_tags() -> None:
    html = """<ol><li>Open Settings<ul><li>on mobile: tap Menu</li></ul>then choose Billing.</li>
    <li>Click Save.</li></ol><p>Done.</p><ul><li>Cards<li>Bank transfer</ul>"""
    blocks = parse_html(html).blocks
    # The words after the nested list were a paragraph after the whole list.
    assert blocks[0].text == (
        "1. Open Settings then choose Billing.\n  - on mobile: tap Menu\n2. Click Save."
    )
    assert blocks[1].text == "Done."
    # "</li>" is optional in HTML: an item without it was dropped.
    assert blocks[2].text == "- Cards\n- Bank transfer"


def test_an_html_item_that_only_holds_a_nested_list_is_read_not_crashed_on() -> None:
    html = "<ol><li><ol><li>Open Settings</li></ol>then click Save.</li></ol>"
    # The words after the nested list resumed a parent item that had no words of
    # its own: an index of -1 into an empty list raised IndexError.
    assert [b.text for b in parse_html(html).blocks] == ["  1. Open Settings\n1. then click Save."]


def test_an_html_faq_in_details_keeps_its_question_apart_from_its_answer() -> None:
    html = "<details><summary>Is there a no-show fee?</summary>Yes: 50% of the price.</details>"
    # It was one paragraph, "Is there a no-show fee?Yes: 50% of the price.".
    assert [b.text for b in parse_html(html).blocks] == [
        "Is there a no-show fee?",
        "Yes: 50% of the price.",
    ]


def test_html_inside_markdown_is_parsed_as_html_and_comments_are_not_text() -> None:
    md = """# Shipping

<!-- TODO: check the locker time with ops -->

<dl>
<dt>Parcel locker</dt><dd>Lockers hold a parcel for 7 days.</dd>
<dt>Signature</dt><dd>Orders over €500 need a signature.</dd>
</dl>

<table><tr><th>Zone</th><th>Price</th></tr><tr><td>EU</td><td>€19.90</td></tr></table>
"""
    blocks = parse_markdown(md).blocks
    # The <dl> was one paragraph whose terms ran into their definitions once its
    # tags were stripped ("Parcel lockerLockers hold…"), and the comment was text.
    assert [(b.kind, b.text) for b in blocks[1:]] == [
        ("list", "- Parcel locker: Lockers hold a parcel for 7 days.\n"
                 "- Signature: Orders over €500 need a signature."),
        ("table", "| Zone | Price |\n| --- | --- |\n| EU | €19.90 |"),
    ]  # fmt: skip
    assert not any("TODO" in b.text for b in blocks)


def test_a_markdown_extra_definition_reads_term_colon_definition() -> None:
    blocks = parse_markdown("Returns\n: You have 30 days to return an unused item.\n").blocks
    # It was "Returns : You have 30 days…" once the line break became a space.
    assert [b.text for b in blocks] == ["Returns: You have 30 days to return an unused item."]


def test_an_html_help_centre_article_is_read_without_the_sites_chrome() -> None:
    html = """<html><head><title>How do I reset my password? | Acme Help Center</title></head>
<body><header><a href="/">Acme Help Center</a></header>
<div class="breadcrumbs"><ol><li><a href="/">Acme Help Center</a></li><li>Account</li></ol></div>
<main><article><header><h1>How do I reset my password?</h1>
<div class="article-meta">Updated 3 months ago</div></header>
<p>Click <strong>Forgot password</strong>. The reset link works for 30 minutes.</p>
<div class="shared-drives-note"><p>Shared drives keep their own passwords.</p></div>
<footer><div class="article-votes">Was this article helpful?<button>Yes</button></div></footer>
</article><aside><h3>Related articles</h3><ul><li>Two-step verification</li></ul></aside></main>
<footer><p>Still need help? Call 1-800-555-0100.</p></footer></body></html>"""
    parsed = parse_html(html)
    # Every page carried the breadcrumbs, the votes, the related articles and the
    # footer's "Still need help?" as its own words.
    assert parsed.title == "How do I reset my password?"
    assert [b.text for b in parsed.blocks] == [
        "How do I reset my password?",
        "Click Forgot password. The reset link works for 30 minutes.",
        "Shared drives keep their own passwords.",
    ]


def test_an_html_page_without_an_article_keeps_its_footer_but_not_its_widgets() -> None:
    html = """<h1>Contact</h1><p>Email support@acme.example.</p>
<form><label>Your email</label><input></form><div id="cookie-banner">We use cookies.</div>
<footer><p>Phone: 1-800-555-0100, 9:00-17:00.</p></footer>"""
    assert [b.text for b in parse_html(html).blocks] == [
        "Contact",
        "Email support@acme.example.",
        "Phone: 1-800-555-0100, 9:00-17:00.",
    ]


def test_a_header_without_a_heading_is_the_sites_banner() -> None:
    html = """<div class="hc-header"><a class="hc-brand" href="/">Medirun Pharmacy
<span>Help Center</span></a><div class="hc-search"><input type="search"></div>
<a href="/signin">Sign in</a></div>
<header class="page-header"><h1>Contact us</h1><p>Updated February 2, 2026</p></header>
<div class="plan-header">Plus plan</div><p>Call 1-800-555-0142 at any hour.</p>"""
    # The banner was the page's opening passage ("Medirun Pharmacy Help Center / Sign
    # in"), retrieved for questions about the page's title in place of its text. A
    # header that holds the article's heading, and a card's "header", stay.
    assert [b.text for b in parse_html(html).blocks] == [
        "Contact us",
        "Updated February 2, 2026",
        "Plus plan",
        "Call 1-800-555-0142 at any hour.",
    ]


def test_plain_text_is_paragraphs_with_optional_front_matter() -> None:
    parsed = parse("text", b"---\ntitle: Notes\n---\nFirst para.\n\nSecond para.\n")
    assert parsed.meta == {"title": "Notes"}
    assert [b.text for b in parsed.blocks] == ["First para.", "Second para."]


TERMS = """CEDARLINE ENERGY LLC
RESIDENTIAL TERMS OF SERVICE

4. EARLY CANCELLATION

4.1 If you end a fixed-rate plan before its end date, you will pay
    the early cancellation fee shown on your EFL.

4.2 We will not charge an early cancellation fee if:
    - you move and give us a forwarding address;
    - you cancel in the last 14 days of your contract; or
    - the account holder has died.

4.3 You must not use the service:
    (a) to resell electricity to a
        neighbour; or
    (b) for a business on a residential plan.

FEES THAT MAY APPLY
Late payment fee                   5% of the past-due balance
Security deposit                   Only if required after a credit check;
                                   see Deposits and credit check

Number type              Access charge     Service charge
0800 (Freephone)         Free              Free
09 (premium rate)        55p per minute    up to 3.60 a minute
"""


def test_plain_text_reads_as_its_layout_means() -> None:
    # Before: paragraphs split at blank lines only, so "FEES THAT MAY APPLY" ran into
    # its table's rows as one line of text, and each wrapped item into its neighbours.
    blocks = parse("text", TERMS.encode()).blocks
    headings = [b.text for b in blocks if b.kind == "heading"]
    assert headings == [
        "CEDARLINE ENERGY LLC",
        "RESIDENTIAL TERMS OF SERVICE",
        "4. EARLY CANCELLATION",
        "FEES THAT MAY APPLY",
    ]
    paragraphs = [b.text for b in blocks if b.kind == "paragraph"]
    # A clause is a paragraph, its wrapped lines one; a lead-in stays before its list.
    assert paragraphs[0] == (
        "4.1 If you end a fixed-rate plan before its end date, you will pay the early "
        "cancellation fee shown on your EFL."
    )
    assert "4.2 We will not charge an early cancellation fee if:" in paragraphs
    lists = [b.units for b in blocks if b.kind == "list"]
    assert lists[0] == (
        "- you move and give us a forwarding address;",
        "- you cancel in the last 14 days of your contract; or",
        "- the account holder has died.",
    )
    assert lists[1] == (
        "- (a) to resell electricity to a neighbour; or",
        "- (b) for a business on a residential plan.",
    )
    tables = [b for b in blocks if b.kind == "table"]
    # Two aligned columns are labels and values; a cell wrapped under itself is one cell.
    assert tables[0].units == (
        "| Late payment fee | 5% of the past-due balance |",
        "| Security deposit | Only if required after a credit check; see Deposits and credit"
        " check |",
    )
    # A code on a line of its own is no heading, however it is capitalised.
    assert [b.kind for b in parse("text", b"Codes we show:\n\nFH-221\n").blocks] == [
        "paragraph",
        "paragraph",
    ]
    # Three columns or more: the first row names them.
    assert tables[1].header.startswith("| Number type | Access charge | Service charge |")
    assert tables[1].units[1] == "| 09 (premium rate) | 55p per minute | up to 3.60 a minute |"
    # Unless it is a row like the next: promoted to a header, "Day 22 … USD 25" named
    # every row's cells ("First late penalty: Second late penalty; USD 25: USD 35").
    schedule = (
        "Fines must be paid within 21 days. After that:\n"
        "Day 22        First late penalty          USD 25\n"
        "Day 61        Second late penalty         USD 35\n"
        "Day 91        Referred to collections     plus 20 percent of the balance\n"
    )
    (table,) = [b for b in parse("text", schedule.encode()).blocks if b.kind == "table"]
    assert table.units[:2] == (
        "| Day 22 | First late penalty | USD 25 |",
        "| Day 61 | Second late penalty | USD 35 |",
    )
    assert table.header.startswith("|  |  |  |")
    # Two columns under a price list's header: the first row names them, so each row
    # keeps its currency ("Lost or damaged key — 350" held no amount).
    prices = (
        "FEES DURING THE HIRE\n"
        "Item                                   Charge (NZD)\n"
        "Late return                            50 per hour or part hour\n"
        "Roadside call-out (driver caused)      150\n"
        "Lost or damaged key                    350\n"
    )
    (table,) = [b for b in parse("text", prices.encode()).blocks if b.kind == "table"]
    assert table.header.startswith("| Item | Charge (NZD) |")
    assert table.units[-1] == "| Lost or damaged key | 350 |"


def minimal_pdf(title: str, lines: list[str]) -> bytes:
    """A one-page PDF with a text stream and an /Info title, built by hand."""
    ops = " ".join(f"({line}) Tj T*" for line in lines)
    stream = f"BT /F1 12 Tf 14 TL 72 720 Td {ops} ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Title ({title}) >>".encode(),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def test_pdf_text_and_title_are_read(tmp_path: Path) -> None:
    path = tmp_path / "memo.pdf"
    path.write_bytes(minimal_pdf("Budget memo", ["The budget for 2027 is 4 million euros."]))
    doc = parse_document(path, tmp_path, Defaults())
    assert doc.title == "Budget memo" and doc.source_format == "pdf"
    assert "4 million euros" in doc.chunks[0].text
    with pytest.raises(ParseError, match="not a readable PDF"):
        parse("pdf", b"%PDF-1.4 garbage")


def test_pdf_pages_lose_their_running_header_and_page_numbers() -> None:
    pages = [
        f"Acme Help Center | Billing guide\n{body}\nPage {n} of 3"
        for n, body in enumerate(
            ["Invoices are sent on the 1st. Payment terms are net 30, and the configu-\nration",
             "of reminders is under Billing. Late fees start after 14 days.",
             "Refunds take 5 business days."],
            start=1,
        )
    ]  # fmt: skip
    # The header and "Page 1 of 3" were read into the sentence that runs over the
    # page break ("…the configu- ration Page 1 of 3 Acme Help Center | Billing
    # guide of reminders…").
    assert pdf_text(pages) == (
        "Invoices are sent on the 1st. Payment terms are net 30, and the configuration"
        "\nof reminders is under Billing. Late fees start after 14 days."
        "\n\nRefunds take 5 business days."
    )
    # A line on one or two pages is content, and a two-page document keeps its lines.
    assert pdf_text(["Title\nA.", "Title\nB."]) == "Title\nA.\n\nTitle\nB."
    # Except a line of four words or more that opens (or closes) both of its pages.
    header = "Cedarline Energy - Electricity Facts Label - Cedar Fixed 12"
    assert pdf_text([f"{header}\nA.\nPage 1 of 2", f"{header}\nB.\nPage 2 of 2"]) == "A.\n\nB."
    # An aligned table's cell wrapped under itself keeps its indent.
    assert pdf_text(["Fee       $20, plus\n          utility charges"]) == (
        "Fee       $20, plus\n          utility charges"
    )


def test_sidecar_metadata_overrides_and_required_fields_are_named(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Some text.\n")
    (tmp_path / "a.txt.meta.yaml").write_text("tenant: t1\ngroups: [g]\nversion: '7'\n")
    doc = parse_document(tmp_path / "a.txt", tmp_path, Defaults(tenant=None, groups=()))
    assert (doc.tenant, doc.groups, doc.version) == ("t1", ["g"], "7")
    (tmp_path / "b.txt").write_text("Other text.\n")
    with pytest.raises(DocumentError, match=r"b\.txt: missing required metadata: tenant"):
        parse_document(tmp_path / "b.txt", tmp_path, Defaults(tenant=None, groups=()))
    with pytest.raises(DocumentError, match="missing required metadata: groups"):
        parse_document(tmp_path / "b.txt", tmp_path, Defaults(tenant="t", groups=()))
    (tmp_path / "c.docx").write_bytes(b"PK")
    with pytest.raises(DocumentError, match=r"unknown type '\.docx'"):
        parse_document(tmp_path / "c.docx", tmp_path, Defaults())


def test_duplicate_rate_counts_repeated_normalised_text() -> None:
    assert duplicate_rate(["A  b", "a b", "c", "d"]) == 0.25
    assert duplicate_rate([]) == 0.0
    blocks = [Block("heading", "X", level=2), Block("paragraph", "same")] * 2
    assert len(chunk_blocks("d", "T", blocks)) == 2


def test_chunk_ids_are_unique_within_a_document_even_when_a_heading_looks_like_a_piece() -> None:
    long = " ".join(["word"] * 15)
    split = [Block("heading", "Step", level=2), Block("paragraph", f"{long}. {long}.")]
    step_2 = [Block("heading", "Step 2", level=2), Block("paragraph", "The second step.")]
    for blocks in (split + step_2, step_2 + split):
        ids = [p.chunk_id for p in chunk_blocks("d", "T", blocks, max_words=20)]
        assert len(ids) == 3 and len(set(ids)) == 3, ids
        assert "d#step" in ids and "d#step-2" in ids  # the first to claim an id keeps it


WIDGETS = """<html><body>
<header class="hd-topbar"><a href="/">Acme Energy Help Centre</a>
<a href="/signin">Sign in</a></header>
<div class="hd-content">
<h1>Billing and account</h1>
<div class="accordion">
  <button>When is my bill due?</button>
  <div class="panel"><p>Your bill is due <b>21 days</b> after the date it's issued.</p></div>
</div>
<div class="faq-item"><button aria-expanded="false">I overpaid</button>
  <div class="panel"><p>Credit of $5 or more is refunded by check.</p></div></div>
<h2>Set up 2-step verification</h2>
<p>Choose your device below.</p>
<div class="tabs">
  <div role="tablist"><button role="tab">iOS</button><button role="tab">Android</button></div>
  <div role="tabpanel" aria-label="iOS"><ol><li>Tap <b>Profile</b>.</li></ol></div>
  <div role="tabpanel" aria-label="Android" hidden><ol><li>Tap the menu.</li></ol></div>
</div>
<p>When you finish, we show you 10 backup codes.</p>
<div class="hd-feedback">Was this helpful? <button>Yes</button> <button>No</button></div>
</div>
<div class="hd-footer"><p>© 2026 Acme Energy LLC.</p></div>
</body></html>"""


def test_help_centre_widgets_read_as_the_article_means_them() -> None:
    blocks = parse_html(WIDGETS).blocks
    shown = [(b.kind, b.text) for b in blocks]
    # An accordion's button is its FAQ's question (a button was chrome, so the
    # question was lost and its answer stood alone); a statement is labelled one.
    assert ("paragraph", "When is my bill due?") in shown
    assert ("paragraph", "Q: I overpaid") in shown
    # A tab panel's label heads its steps, and what follows the tabs is the section's.
    headings = [b.text for b in blocks if b.kind == "heading"]
    assert headings == [
        "Billing and account",
        "Set up 2-step verification",
        "iOS",
        "Android",
        "Set up 2-step verification",
    ]
    assert [b.level for b in blocks if b.kind == "heading"][2:] == [3, 3, 2]
    assert shown[-1] == ("paragraph", "When you finish, we show you 10 backup codes.")
    # The site's top bar, footer and feedback buttons are chrome.
    text = " ".join(b.text for b in blocks)
    assert "Sign in" not in text and "© 2026" not in text and "Yes No" not in text


def test_mkdocs_and_docusaurus_admonitions_are_notes_led_by_their_title() -> None:
    # Before: '!!! warning "Leaving Budget Billing" You can leave…' was one paragraph,
    # the marker read as the first words of the note's first sentence.
    body = (
        "Budget Billing evens out your bills.\n\n"
        '!!! warning "Leaving Budget Billing"\n'
        "    You can leave at any time, but the balance is then due on\n"
        "    your next bill.\n\n"
        ":::tip\n"
        "Use AutoPay from a bank account and we'll take $3 off.\n"
        ":::\n\n"
        "```\n!!! not a note inside code\n```\n"
    )
    blocks = parse_markdown(body).blocks
    assert [(b.kind, b.text) for b in blocks] == [
        ("paragraph", "Budget Billing evens out your bills."),
        (
            "quote",
            "> **Leaving Budget Billing:** You can leave at any time, but the balance is then"
            " due on\n> your next bill.",
        ),
        ("quote", "> **Tip:** Use AutoPay from a bank account and we'll take $3 off."),
        ("code", "```\n!!! not a note inside code\n```"),
    ]


def test_a_table_of_row_headers_has_no_header_row() -> None:
    # Before: the first row ("*#100# | Your bill so far this month") was promoted to
    # the header because it had a <th>, and every row read "321 — Your bill so far
    # this month: Voicemail".
    table = (
        "<table><caption>Short codes</caption><tbody>"
        '<tr><th scope="row"><code>*#100#</code></th><td>Your bill so far this month</td></tr>'
        '<tr><th scope="row">150</th><td>Customer Care</td></tr>'
        '<tr><th scope="row">321</th><td>Voicemail</td></tr>'
        "</tbody></table>"
    )
    (block,) = [b for b in parse_html(table).blocks if b.kind == "table"]
    assert block.units == (
        "| *#100# | Your bill so far this month |",
        "| 150 | Customer Care |",
        "| 321 | Voicemail |",
    )
    # A row of <th> alone is still the header, over rows that have their own <th>.
    roles = (
        "<table><tr><th>Role</th><th>How many</th></tr>"
        '<tr><th scope="row">Bill viewer</th><td>Up to 5</td></tr></table>'
    )
    (block,) = [b for b in parse_html(roles).blocks if b.kind == "table"]
    assert block.header.startswith("| Role | How many |")
