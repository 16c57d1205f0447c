"""Answer units: rows keep their header, items their lead-in, wrapped sentences join."""

from __future__ import annotations

from ragway.units import is_table_separator, plain, split_sentences, units, unmarked

PAGE = """Northwind is available on four plans. Paid plans are billed
**per seat**: a seat is any full member of the workspace.

| Plan     | Price per seat | Storage         |
|----------|---------------:|-----------------|
| Free     | $0             | 5 GB            |
| Business | $11.75         | 100 GB per seat |

To enable SSO:

1. Open **Admin console → Security**.
2. Paste the metadata URL
   from your identity provider.
3. Click `Save`.

> **Warning:** Turning on SSO signs everyone out.
"""


def test_a_table_row_keeps_its_row_key_and_header_cells() -> None:
    rows = [u for u in units(PAGE) if u.kind == "row"]
    assert [r.key for r in rows] == ["Free", "Business"]
    business = rows[1]
    assert business.text == "Business — Price per seat: $11.75; Storage: 100 GB per seat"
    assert business.row_text([2]) == "Business — Storage: 100 GB per seat"
    assert "Plan | Price per seat | Storage" in business.context


def test_a_step_keeps_its_lead_in_and_a_wrapped_step_is_one_unit() -> None:
    items = [u for u in units(PAGE) if u.kind == "item"]
    assert [i.text for i in items] == [
        "1. Open Admin console → Security.",
        "2. Paste the metadata URL from your identity provider.",
        "3. Click Save.",
    ]
    assert all(i.key == "To enable SSO:" for i in items)


def test_a_wrapped_paragraph_is_read_as_whole_sentences_without_markdown() -> None:
    sentences = [u.text for u in units(PAGE) if u.kind == "sentence"]
    assert "Paid plans are billed per seat: a seat is any full member of the workspace." in (
        sentences
    )
    assert "Warning: Turning on SSO signs everyone out." in sentences
    assert not any("**" in s or "`" in s for s in sentences)


def test_plain_removes_emphasis_code_and_links_but_keeps_every_word_and_number() -> None:
    assert plain("Use **10 codes** from `nw login` ([docs](https://x.example))") == (
        "Use 10 codes from nw login (docs)"
    )
    assert plain("snake_case_name and 2 * 3 stay") == "snake_case_name and 2 * 3 stay"


def test_abbreviations_do_not_end_a_sentence() -> None:
    assert split_sentences("Use a key, e.g. the admin one. Then save.") == [
        "Use a key, e.g. the admin one.",
        "Then save.",
    ]
    # "…through the U.S." and "Postal Service and usually take 10 to 21 days." were
    # two units, and the second was quoted on its own.
    assert split_sentences(
        "Orders go by mail through the U.S. Postal Service and take 10 to 21 days. We ship daily."
    ) == [
        "Orders go by mail through the U.S. Postal Service and take 10 to 21 days.",
        "We ship daily.",
    ]


def test_a_clock_time_keeps_its_zone_and_a_number_its_abbreviation() -> None:
    # "2 p.m." then "PT." as two sentences lost the zone from every answer quoting it.
    assert split_sentences("Orders before 2 p.m. PT ship today. Later ones ship tomorrow.") == [
        "Orders before 2 p.m. PT ship today.",
        "Later ones ship tomorrow.",
    ]
    assert split_sentences("Open until 5 p.m. UTC. Call ext. 204 or see Fig. 2 below.") == [
        "Open until 5 p.m. UTC.",
        "Call ext. 204 or see Fig. 2 below.",
    ]
    # A zone written out: "If you ask before 5 p.m." alone lost the condition's rest.
    assert split_sentences(
        "If you ask before 5 p.m. Central Time on a business day, we start the same day. "
        "Lines are open until 8 p.m. UK time."
    ) == [
        "If you ask before 5 p.m. Central Time on a business day, we start the same day.",
        "Lines are open until 8 p.m. UK time.",
    ]
    assert split_sentences("Plan No. 3 has SSO. Ask Dr. Patel or St. Mary's clinic.") == [
        "Plan No. 3 has SSO.",
        "Ask Dr. Patel or St. Mary's clinic.",
    ]
    # Without a zone or a number after them they end a sentence as before.
    assert split_sentences("We open at 9 a.m. Doors close at 5. Is it free? No. It costs $5.") == [
        "We open at 9 a.m.",
        "Doors close at 5.",
        "Is it free?",
        "No.",
        "It costs $5.",
    ]


def test_reference_links_read_as_their_words_and_their_definitions_are_not_units() -> None:
    assert (
        plain("See the [pricing page][pricing] or the [FAQ][].")
        == "See the pricing page or the FAQ."
    )
    page = (
        'Prices are on the [pricing page][pricing].\n\n[pricing]: https://x.example/p "Pricing"\n'
    )
    assert [u.text for u in units(page)] == ["Prices are on the pricing page."]


def test_a_loose_list_keeps_its_lead_in_and_an_items_indented_paragraph() -> None:
    page = (
        "To add a card:\n\n1. Open Billing.\n\n2. Click Add card.\n   - on mobile: tap Menu\n\n"
        "   Then confirm with your PIN.\n\n3. Enter the card number.\n\nDone.\n\n- x\n\n1. new"
    )
    found = [(u.kind, u.text, u.key) for u in units(page)]
    lead = "To add a card:"
    # Items after a blank line lost their lead-in, and step 2's own paragraph became
    # the lead-in of step 3.
    assert found == [
        ("sentence", lead, ""),
        ("item", "1. Open Billing.", lead),
        ("item", "2. Click Add card. Then confirm with your PIN.", lead),
        ("item", "on mobile: tap Menu", lead),
        ("item", "3. Enter the card number.", lead),
        ("sentence", "Done.", ""),
        ("item", "x", "Done."),
        ("item", "1. new", ""),  # a numbered list after a bulleted one is another list
    ]


def test_a_pipe_table_without_outer_pipes_gives_rows() -> None:
    page = "Prices:\n\nRegion | AC | DC\n--- | --- | ---\nGermany | 0,49 € | 0,59 €\n\nAfter."
    rows = [u.row_text() for u in units(page) if u.kind == "row"]
    # It was one run-on sentence of every cell and the separator's dashes.
    assert rows == ["Germany — AC: 0,49 €; DC: 0,59 €"]


def test_bold_label_lines_and_hard_breaks_are_lines_of_their_own() -> None:
    page = (
        "**Max sessions per day:** 20\n**Idle fee:** $0.40 a minute\n**Session limit**: 4 hours\n\n"
        "Open 9 to 5  \nClosed on Sundays<br>\nHolidays vary"
    )
    assert [u.text for u in units(page)] == [
        "Max sessions per day: 20",
        "Idle fee: $0.40 a minute",
        "Session limit: 4 hours",
        "Open 9 to 5",
        "Closed on Sundays",
        "Holidays vary",
    ]


def test_pasted_bullets_are_items_with_their_lead_in() -> None:
    page = "We send these reminders:\n• Email 48 hours before\n• SMS 24 hours before\n  ◦ Pro only"
    found = [(u.kind, u.text, u.context) for u in units(page)]
    lead = "We send these reminders:"
    # They were one sentence: "We send these reminders: • Email 48 hours before • SMS …".
    assert found == [
        ("sentence", lead, ""),
        ("item", "Email 48 hours before", lead),
        ("item", "SMS 24 hours before", lead),
        ("item", "Pro only", f"{lead} SMS 24 hours before"),
    ]


def test_a_labelled_question_runs_to_its_question_mark_or_its_answer() -> None:
    page = (
        "Q: My session didn't start, but there's a payment on my card. Why?\n"
        "A: It is a hold. Banks take up to 3 working days to remove it.\n\n"
        "Q: Card declined. A: Check the expiry date."
    )
    found = [(u.text, u.context) for u in units(page)]
    asked = "My session didn't start, but there's a payment on my card. Why?"
    # The question's first sentence was a unit of its own and "Why?" the question.
    assert found == [
        ("It is a hold.", asked),
        ("Banks take up to 3 working days to remove it.", asked),
        ("Check the expiry date.", "Card declined."),
    ]


def test_a_table_without_a_separator_still_gives_rows() -> None:
    rows = [u for u in units("| a | 1 |\n| b | 2 |") if u.kind == "row"]
    assert [r.key for r in rows] == ["a", "b"]


def test_a_table_with_one_hyphen_alignment_cells_reads_its_header() -> None:
    # GFM's tersest delimiter row: before, "-{2,}" missed ":-:", so the header
    # became a row of its own ("Plan — Seats; Storage") and the delimiter another.
    rows = [u for u in units("| Plan | Seats | Storage |\n|:-|-:|:-:|\n| Team | 25 | 10 GB |")]
    assert [u.text for u in rows] == ["Team — Seats: 25; Storage: 10 GB"]
    assert rows[0].key == "Team"
    assert is_table_separator("|:-|-:|:-:|") and is_table_separator(" --- | :---: ")
    assert not is_table_separator("| - | 5 |") and not is_table_separator("Pro | —")


def test_a_markdown_footnote_reads_without_its_label() -> None:
    # Before, "[^1]: Per seat." lost only "[^1]" and was quoted as ": Per seat.".
    found = units("Storage is 10 GB.[^1]\n\n[^1]: Per seat.\n[^2]: Billed yearly.")
    assert [u.text for u in found] == ["Storage is 10 GB.", "Per seat.", "Billed yearly."]


def test_emoji_shortcodes_are_icons_and_a_tables_check_and_cross_are_its_marks() -> None:
    # Before: ":warning:" was quoted as words, and a matrix of ":x:" and
    # ":white_check_mark:" cells said neither yes nor no.
    assert plain(":warning: Deleting a workspace can't be undone.") == (
        "Deleting a workspace can't be undone."
    )
    rows = units("| Plan | SSO |\n|---|:-:|\n| Team | :x: |\n| Pro | :white_check_mark: |")
    assert [u.text for u in rows] == ["Team — SSO: ✗", "Pro — SSO: ✓"]
    # Times, ratios and addresses are no shortcodes.
    assert plain("Open 10:30:45, ratio 1:2:3, see https://x.example/a:b:c") == (
        "Open 10:30:45, ratio 1:2:3, see https://x.example/a:b:c"
    )


def test_the_askers_sentences_before_an_faqs_question_are_the_question_too() -> None:
    # Before: "I left my bag on the train a few minutes ago." was an answer unit, and
    # "I left a nice umbrella on a train…" was answered with it.
    found = units(
        "**I left my bag on the train a few minutes ago. Can you stop it?**\n"
        "We can't hold or search a train for lost property."
    )
    assert [(u.text, u.asked) for u in found] == [
        (
            "We can't hold or search a train for lost property.",
            "I left my bag on the train a few minutes ago. Can you stop it?",
        )
    ]
    # A product called "My Homestead" is no asker.
    found = units("Sign in to My Homestead. Need help? Call us.")
    assert [u.text for u in found] == ["Sign in to My Homestead.", "Call us."]


def test_inline_code_is_kept_verbatim() -> None:
    # "<code>" in a command is a placeholder, not an HTML tag; "__init__" no emphasis.
    assert plain("Run `pclops carrier failover --carrier <code> --on` now.") == (
        "Run pclops carrier failover --carrier <code> --on now."
    )
    assert plain("Edit `__init__.py` and <b>save</b> it.") == "Edit __init__.py and save it."


def test_emphasis_around_inline_code_is_removed_with_the_code_kept() -> None:
    # Read piece by piece around the code span, each "**" stayed in the answer raw.
    assert plain("**`HS-204` — Authentication failed.** The line works.") == (
        "HS-204 — Authentication failed. The line works."
    )
    assert plain("Run **`ragway eval`** or _`make test`_.") == "Run ragway eval or make test."
    assert plain("`**kwargs` and **bold**") == "**kwargs and bold"


def test_an_faq_question_is_the_context_of_its_answer_not_a_unit() -> None:
    faq = (
        "**Do you ship to PO boxes?**\n"
        "Only USPS and Royal Mail deliver to PO boxes. Some carriers charge extra.\n\n"
        "**Can I pay by card?**\n\n"
        "Every plan can be paid by card.\n"
    )
    found = units(faq)
    assert [u.text for u in found] == [
        "Only USPS and Royal Mail deliver to PO boxes.",
        "Some carriers charge extra.",
        "Every plan can be paid by card.",
    ]
    assert found[0].context == "Do you ship to PO boxes?"
    # A question alone in its paragraph is the context of the paragraph after it.
    assert found[2].context == "Can I pay by card?"


def test_a_sentence_that_leans_on_the_one_before_quotes_it() -> None:
    text = (
        "Only USPS and Royal Mail deliver to PO boxes. Other carriers reject the label "
        "with error PCL-2207. Labels are billed when printed."
    )
    found = units(text)
    assert found[1].key == "Only USPS and Royal Mail deliver to PO boxes."
    assert found[1].context == found[1].key
    assert found[2].key == ""  # stands on its own


def test_a_row_reads_the_footnote_its_cell_points_to() -> None:
    page = (
        "| Run type | Approve by |\n"
        "|---|---|\n"
        "| Standard | 5:00 p.m. ET, 2 business days before |\n"
        "| Same-day | 10:00 a.m. ET on pay day† |\n"
        "| Extra | 3 p.m.* |\n\n"
        "† Same-day runs are limited to $25,000 per run.\n\n"
        "\\* Only on Premium.\n"
    )
    rows = {u.key: u for u in units(page) if u.kind == "row"}
    assert rows["Same-day"].note == "Same-day runs are limited to $25,000 per run."
    assert "$25,000" in rows["Same-day"].context  # embedded and weighed with the row
    assert rows["Extra"].note == "Only on Premium."
    assert (rows["Same-day"].note_marks, rows["Extra"].note_marks) == ("†", "*")
    assert rows["Standard"].note == ""


def test_a_quote_beside_its_note_loses_the_marks_that_end_its_words() -> None:
    assert unmarked("Early termination charge* — £8.50; Ireland: €9.50*", "*") == (
        "Early termination charge — £8.50; Ireland: €9.50"
    )
    assert unmarked("10:00 a.m. ET on pay day†.", "†") == "10:00 a.m. ET on pay day."
    # A mark that starts a word, or a sign the notes do not use, is the cell's own.
    own = "Domains: *.example.com; Area: 10 m²"
    assert unmarked(own, "*") == own


def test_footnotes_on_consecutive_lines_are_notes_of_their_own() -> None:
    # Notes under a table are often written one per line, each wrapped; read as one
    # paragraph, "² The Home M also runs…" was glued to the end of note ¹ (no capital
    # after "order." to split at) and only the first note reached its rows.
    page = (
        "| Model | Supply | Price¹ |\n"
        "|---|---|---|\n"
        "| Home S | Single-phase | £849 |\n"
        "| Home M | Three-phase² | £999 |\n\n"
        "¹ Standard installation in the United Kingdom. Prices in other countries are\n"
        "shown in the app when you order.\n"
        "² The Home M also runs on a single-phase supply, limited to 7.4 kW.\n"
        "\\* Only with the Wi-Fi model.\n"
        "**Bold lead-in** and the text that follows it.\n"
    )
    found = units(page)
    sentences = [u.text for u in found if u.kind == "sentence"]
    # Each note is a unit of its own, quoted without the mark of a table not shown.
    assert "The Home M also runs on a single-phase supply, limited to 7.4 kW." in sentences
    assert "Only with the Wi-Fi model." in sentences
    assert not any("order. ²" in s for s in sentences)
    rows = {u.key: u for u in found if u.kind == "row"}
    note = "The Home M also runs on a single-phase supply, limited to 7.4 kW."
    assert rows["Home M"].note == note
    assert rows["Home S"].note == ""  # its cells carry no mark (the header's ¹ is no cell's)
    # Emphasis at a line's start is no footnote: it stays with the line before.
    assert any(s.endswith("Bold lead-in and the text that follows it.") for s in sentences)


def test_an_faq_written_with_q_and_a_labels_answers_without_them() -> None:
    faq = (
        "Q: What happens if a parcel is lost?\n"
        "A: Open a claim within 21 days of the ship date. We refund the label.\n\n"
        "Question: Can I change the address?\n"
        "Answer: Only for UPS parcels.\n"
    )
    found = units(faq)
    assert [u.text for u in found] == [
        "Open a claim within 21 days of the ship date.",
        "We refund the label.",
        "Only for UPS parcels.",
    ]
    assert found[0].context == "What happens if a parcel is lost?"
    assert found[2].context == "Can I change the address?"
    # An answer that opens with the article keeps it.
    assert units("Do you ship abroad? A customs form is needed.")[0].text == (
        "A customs form is needed."
    )


def test_plain_text_reads_as_a_person_reads_the_rendered_page() -> None:
    # Entities are their characters (exported help centres are full of them).
    assert plain("Terms &amp; conditions apply&nbsp;to all plans.") == (
        "Terms & conditions apply to all plans."
    )
    assert plain("Costs 5&euro; a month &mdash; billed yearly.") == (
        "Costs 5€ a month — billed yearly."
    )
    assert plain("Write &lt;b&gt; for bold.") == "Write <b> for bold."
    # An autolink is its address, not an HTML tag to drop.
    assert plain("See <https://example.com/help> or mail <help@example.com>.") == (
        "See https://example.com/help or mail help@example.com."
    )
    # Escaped characters are characters, never emphasis.
    assert plain(r"Use the \*wildcard\* or \_under\_.") == "Use the *wildcard* or _under_."
    assert plain(r"5 \* 3 = 15") == "5 * 3 = 15"
    # Struck-out text no longer holds; footnote references are no words.
    assert plain("~~$12~~ $10 a month.[^1]") == "$10 a month."
    # Code stays verbatim, escapes and all.
    assert plain(r"Run `a\*b &amp; c`.") == r"Run a\*b &amp; c."


def test_a_table_cell_with_entities_and_escaped_pipes_reads_plainly() -> None:
    rows = units("| Plan | Price |\n|---|---|\n| Pro &amp; Team | &#36;10 |\n| A \\| B | 5 |")
    assert [u.text for u in rows] == ["Pro & Team — Price: $10", "A | B — Price: 5"]


def test_callout_markers_and_line_breaks_are_layout_not_words() -> None:
    page = (
        ":::tip\nExports finish within **2 hours** for most workspaces.\n:::\n\n"
        '!!! warning "Heads up"\n    Deleted projects are purged after 30 days.\n\n'
        "> [!NOTE]\n> Invoices are emailed on the 1st.\n\n"
        "| Plan | Notes |\n|---|---|\n| Pro | Up to 50 seats<br>Extra seats $8 each |\n"
    )
    assert [u.text for u in units(page)] == [
        "Exports finish within 2 hours for most workspaces.",
        "Deleted projects are purged after 30 days.",
        "Invoices are emailed on the 1st.",
        "Pro — Notes: Up to 50 seats Extra seats $8 each",
    ]


def test_a_callout_after_a_list_and_a_blank_line_is_read_not_crashed_on() -> None:
    page = (
        "1. Open Profile → Security.\n2. Click Enable 2FA.\n\n"
        '!!! warning "Backup codes"\n    Save your 10 backup codes.\n\n'
        "- Admins can require 2FA.\n\n:::tip\nRequired 2FA applies at the next sign-in.\n:::\n"
    )
    # A list, a blank line, then a callout: the blank line left "a list may go on"
    # set after the callout closed the list, and the next line failed an assertion
    # in the generator and in the retriever's write of the unit vectors.
    assert [u.text for u in units(page)] == [
        "1. Open Profile → Security.",
        "2. Click Enable 2FA.",
        "Save your 10 backup codes.",
        "Admins can require 2FA.",
        "Required 2FA applies at the next sign-in.",
    ]


def test_a_bold_alert_word_on_its_own_line_is_a_marker_not_the_first_word() -> None:
    page = (
        "> **Warning**\n> Clearing the cache deletes changes that haven't synced.\n\n"
        "> ⚠️ **Caution**\n> The charger gets hot.\n\n"
        "**Important:** Do not unplug during an update.\n"
    )
    # "Warning Clearing the cache deletes…" was quoted as the answer's sentence.
    assert [u.text for u in units(page)] == [
        "Clearing the cache deletes changes that haven't synced.",
        "The charger gets hot.",
        "Important: Do not unplug during an update.",
    ]


def test_name_dash_value_lines_are_units_of_their_own() -> None:
    page = "Max folder depth — 20 levels\nMax files per folder — 10,000\n"
    # They were one run-on sentence: "Max folder depth — 20 levels Max files per…".
    assert [u.text for u in units(page)] == [
        "Max folder depth — 20 levels",
        "Max files per folder — 10,000",
    ]
    # Wrapped prose with dashes in it stays one sentence.
    for prose in (
        "Payouts arrive in 2 days — faster than\nmost banks — and are free.",
        "Cards, PayPal and — for annual plans\nOver **$3,000** — invoices with net 45 terms.",
    ):
        assert len(units(prose)) == 1, prose


def test_an_item_with_no_words_is_no_unit() -> None:
    page = 'To pay:\n\n- <img src="card.png">\n- Open Billing.\n1. ![](shot.png)\n2. Click Pay.'
    # The picture-only items were units with no text ("" and "1. "), quotable as answers.
    assert [u.text for u in units(page)] == ["To pay:", "Open Billing.", "2. Click Pay."]


def test_an_askers_own_words_after_their_question_are_the_question_not_an_answer() -> None:
    # A community page: the post that asks goes on in the first person. Before, "I keep
    # finding them the week of the deadline." was a unit read with the question as its
    # context, so it answered "Where can I see which contractors are missing a W-9?".
    page = (
        "> **Marisol** · Dec 12\n"
        "> Is there a way to see which contractors are still missing a W-9? I keep\n"
        "> finding them the week of the deadline.\n\n"
        "> **cpa_grant_k** · Dec 14\n"
        "> @Marisol: Reports → Contractors → W-9 status.\n\n"
        "Do you ship to PO boxes? Yes, with USPS. I recommend tracking them.\n"
    )
    found = units(page)
    assert [u.text for u in found] == [
        "cpa_grant_k · Dec 14 @Marisol: Reports → Contractors → W-9 status.",
        "Yes, with USPS.",
        "I recommend tracking them.",
    ]
    # The reply is read with the whole question, the asker's words included.
    assert found[0].context.endswith("I keep finding them the week of the deadline.")
    assert "W-9?" in found[0].context
    # An answer in the first person after a statement is still an answer.
    assert found[2].context == "Do you ship to PO boxes?"


def test_control_characters_in_a_page_are_dropped_not_read_as_placeholders() -> None:
    # plain() holds code and escapes aside behind \x00 and \x01; a page's own one
    # followed by digits was looked up as a held piece and raised IndexError.
    assert plain("a \x015\x01 b") == "a 5 b"
    assert plain("a \x000\x00 b `c`") == "a 0 b c"


def test_a_second_header_row_written_as_a_row_names_the_spanned_columns() -> None:
    # Before: "Price per month" named only the 30-day column, the 12-month column had
    # no name, and the second header row was a row keyed "" ("— 30-day rolling; …").
    table = (
        "| Plan      | Data  | Price per month |          | Rollover of unused data |\n"
        "|-----------|-------|-----------------|----------|-------------------------|\n"
        "|           |       | 30-day rolling  | 12-month |                         |\n"
        "| Starter   | 5GB   | £7              | £6       |                         |\n"
        "| Everyday  | 35GB  | £11             | £10      | Yes, for one month      |\n"
    )
    assert [u.text for u in units(table)] == [
        "Starter — Data: 5GB; Price per month 30-day rolling: £7; Price per month 12-month: £6",
        "Everyday — Data: 35GB; Price per month 30-day rolling: £11; Price per month 12-month:"
        " £10; Rollover of unused data: Yes, for one month",
    ]
    # A table whose first row has a key is not read this way.
    plain_table = "| Plan | Price |  |\n|---|---|---|\n| Starter | £7 | monthly |\n"
    assert [u.text for u in units(plain_table)] == ["Starter — Price: £7; monthly"]


def test_a_row_that_leaves_its_first_cell_blank_goes_on_with_the_row_above() -> None:
    # Before: "— Recipes a week: 4; Price per serving (€): 6.99", a row of no box, so
    # "the price per serving for a 2-person box with 4 recipes" had no row to name.
    table = (
        "| Box      | Recipes a week | Price per serving (€) |\n"
        "|----------|:--------------:|----------------------:|\n"
        "| 2 people | 3              | 7.49                  |\n"
        "|          | 4              | 6.99                  |\n"
        "| 4 people | 3              | 5.99                  |\n"
        "|          | 4              | 5.49                  |\n"
    )
    found = units(table)
    assert [u.key for u in found] == ["2 people", "2 people", "4 people", "4 people"]
    assert found[1].text == "2 people — Recipes a week: 4; Price per serving (€): 6.99"


def test_a_row_keyed_by_a_short_code_is_named_with_its_column() -> None:
    # Before: "B — Annual charge (£): 1,765.03", a key no question's words meet; people
    # say "a Band B home". A key that is a word already, or a long code, stays as it is.
    table = (
        "| Band | Value on 1 April 1991 | Annual charge (£) |\n"
        "|------|-----------------------|------------------:|\n"
        "| A    | up to £40,000         | 1,512.88          |\n"
        "| B    | £40,001 to £52,000    | 1,765.03          |\n"
        "| M3   | £52,001 to £68,000    | 2,017.17          |\n"
    )
    found = units(table)
    assert [u.key for u in found] == ["Band A", "Band B", "Band M3"]
    assert found[1].text.startswith("Band B — Value on 1 April 1991: £40,001 to £52,000;")
    plans = "| Plan | Price |\n|---|---|\n| Pro | $12 |\n| SKU-2041 | $3 |\n"
    assert [u.key for u in units(plans)] == ["Pro", "SKU-2041"]


def test_a_bold_second_header_row_under_a_blank_key_header_names_the_columns() -> None:
    # Before: "Procedure — Price by species (£): Dog; Cat; Rabbit" was a row, and every
    # price sat under one spanning header, so no column said which species it was for.
    table = (
        "|                          | Price by species (£, inc. VAT) |         |            |\n"
        "|--------------------------|-------------:|-------:|-------:|\n"
        "| **Procedure**            | **Dog**      | **Cat**| **Rabbit** |\n"
        "| Spay (female neuter)     | 425.00†      | 139.00 | 165.00 |\n"
        "| Castration (male neuter) | 315.00†      | 99.00  | 129.00 |\n"
    )
    found = units(table)
    assert [u.key for u in found] == ["Spay (female neuter)", "Castration (male neuter)"]
    assert found[1].cells[3] == ("Price by species (£, inc. VAT) Rabbit", "129.00")
    # A first row of values under a header with a blank key cell stays a row.
    plain_rows = "| | Price (£) | |\n|---|---|---|\n| **Spay** | 425.00 | 139.00 |\n"
    assert [u.key for u in units(plain_rows)] == ["Spay"]
