"""What the bot writes: sources as numbered links, refusals with reasons, the message limit."""

from __future__ import annotations

import html

from services.telegram.render import MESSAGE_LIMIT, final_messages, preview, source_link


def _citation(number: int, url: str = "/docs/streaming") -> dict[str, object]:
    return {
        "number": number,
        "source_id": f"c{number}",
        "document_id": "streaming",
        "title": "Streaming & <replay>",
        "section": "Resuming",
        "url": url,
    }


def test_when_answered_then_sources_are_numbered_links_under_the_answer() -> None:
    answer = {"answer": "Send Last-Event-ID [1].", "citations": [_citation(1)], "refused": False}
    [message] = final_messages(answer, "https://docs.example.com/")
    assert message == (
        "Send Last-Event-ID [1].\n\n<b>Sources</b>\n"
        '[1] <a href="https://docs.example.com/docs/streaming">Streaming &amp; &lt;replay&gt;</a>'
        " — Resuming"
    )


def test_when_no_base_url_then_a_path_stays_text_since_telegram_links_only_absolute_urls() -> None:
    answer = {"answer": "x [1]", "citations": [_citation(1)], "refused": False}
    [message] = final_messages(answer)
    assert "<a " not in message and "(/docs/streaming)" in message
    assert source_link("https://a.example/b", "") == "https://a.example/b"


def test_when_refused_then_the_reason_is_shown_and_no_sources() -> None:
    answer = {
        "answer": "",
        "citations": [],
        "refused": True,
        "refusal_reason": "weak_evidence",
        "refusal_detail": "the evidence is too weak to answer",
    }
    [message] = final_messages(answer)
    assert message.startswith("<b>I can't answer that from the knowledge base.</b>")
    assert "Reason: the evidence is too weak to answer" in message
    assert "Sources" not in message


def test_when_the_answer_is_long_then_it_is_split_within_the_limit_at_spaces() -> None:
    words = " ".join(f"word{i}<&>" for i in range(2000))  # ~20 000 chars escaped
    answer = {"answer": words, "citations": [_citation(n) for n in (1, 2)], "refused": False}
    messages = final_messages(answer, "https://d.example")
    assert len(messages) >= 4
    assert all(len(m) <= MESSAGE_LIMIT for m in messages)
    joined = " ".join(m for m in messages)
    # Nothing lost and no word or entity cut: every word arrives whole.
    assert all(f"word{i}&lt;&amp;&gt;" in joined for i in range(2000))
    assert messages[-1].endswith("— Resuming")


def test_the_streaming_preview_fits_one_message() -> None:
    assert preview("") == "Searching the knowledge base…"
    long = preview("a" * (MESSAGE_LIMIT + 10))
    assert len(long) == MESSAGE_LIMIT and long.endswith("…")


def test_a_pages_escaped_bracket_is_shown_as_the_page_wrote_it() -> None:
    text = 'Send "steps": \\[5, 25, 50] to the API. [1]'
    [message] = final_messages({"answer": text, "citations": []})
    assert '"steps": [5, 25, 50] to the API. [1]' in html.unescape(message)
    assert "\\[" not in message and "\\[" not in preview(text)
