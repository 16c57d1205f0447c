"""The follow-up rewriter: each rule on help-centre phrasings, and that a rewrite only
uses the user's words."""

from __future__ import annotations

import re

import pytest

from ragway.followup import RuleRewriter, standalone_query

HUDDLE = "How many people can be in a huddle on Starter?"
CACHE = "How do I clear the cache on the mobile app?"
TRASH = "How long do deleted files stay in the trash?"


@pytest.mark.parametrize(
    ("previous", "question", "query", "rule"),
    [
        (
            HUDDLE,
            "what about Business?",
            "How many people can be in a huddle on Business?",
            "contrast",
        ),
        (
            HUDDLE,
            "and on Enterprise?",
            "How many people can be in a huddle on Enterprise?",
            "contrast",
        ),
        (
            HUDDLE,
            "How about the Free plan?",
            "How many people can be in a huddle on Free plan?",
            "contrast",
        ),
        (
            CACHE,
            "no, I meant the desktop client",
            "How do I clear the cache on the desktop client?",
            "correction",
        ),
        (
            CACHE,
            "and for the desktop app?",
            "How do I clear the cache on the desktop app?",
            "contrast",
        ),
        (
            TRASH,
            "and on Enterprise?",
            "How long do deleted files stay in the trash on Enterprise?",
            "ellipsis",
        ),
        (
            TRASH,
            "is it the same on Business?",
            "How long do deleted files stay in the trash on Business?",
            "ellipsis",
        ),
        (TRASH, "can I restore them?", "can I restore deleted files?", "pronoun"),
        ("How do I resume a stream?", "can I cancel it?", "can I cancel stream?", "pronoun"),
        (
            "How long is saved meeting chat kept?",
            "what about the audit log?",
            "How long is audit log kept?",
            "contrast",
        ),
        (
            "Is SSO available on Starter?",
            "is it included on Business?",
            "is SSO included on Business?",
            "pronoun",
        ),
        (
            "How long is the audit log kept on Business?",
            "can I export it?",
            "can I export audit log (Business)?",
            "pronoun",
        ),
        # A subject ends before a preposition, not after it.
        (
            "How do I clear the cache after an update?",
            "can I undo it?",
            "can I undo update?",
            "pronoun",
        ),
        ("How are API keys stored?", "how do I add one?", "how do I add API keys?", "pronoun"),
        # The word that said what the entity was stays: a version, a plan.
        (
            "Which iOS version does the Northwind app need?",
            "and for Android?",
            "Which Android version does the Northwind app need?",
            "contrast",
        ),
        (
            "How many hosts does the Business plan need at minimum?",
            "and Enterprise?",
            "How many hosts does the Enterprise plan need at minimum?",
            "contrast",
        ),
        # "from" is a qualifier's preposition like "on" and "for".
        (
            "What's the max size per file on Business?",
            "and from the mobile app?",
            "What's the max size per file on Business from the mobile app?",
            "ellipsis",
        ),
        # "and" before a contrast of its own.
        (
            TRASH,
            "and is it the same on Business?",
            "How long do deleted files stay in the trash on Business?",
            "ellipsis",
        ),
    ],
)
def test_a_follow_up_becomes_the_standalone_query(
    previous: str, question: str, query: str, rule: str
) -> None:
    rewrite = standalone_query(question, [previous])
    assert (rewrite.query, rewrite.rule) == (query, rule)
    assert rewrite.question == question  # kept for display
    assert rewrite.rewritten


@pytest.mark.parametrize(
    "question",
    [
        "What is the API rate limit on Starter?",  # its own subject: a topic change
        "what about the API rate limits for incoming webhooks?",
        "How do I turn on two-factor authentication for my workspace?",
        "and how many co-hosts can I assign?",  # "and" before a question of its own
    ],
)
def test_a_question_that_stands_alone_passes_through(question: str) -> None:
    rewrite = standalone_query(question, [TRASH])
    assert (rewrite.query, rewrite.rule, rewrite.rewritten) == (question, "standalone", False)


def test_the_first_turn_is_not_rewritten() -> None:
    rewrite = RuleRewriter().rewrite("  and on Business? ", [])
    assert (rewrite.query, rewrite.rule) == ("and on Business?", "first")


def test_only_the_latest_turn_is_the_context() -> None:
    rewrite = standalone_query("and on Enterprise?", [CACHE, HUDDLE])
    assert rewrite.query == "How many people can be in a huddle on Enterprise?"


@pytest.mark.parametrize(
    ("previous", "question"),
    [
        (HUDDLE, "what about Business?"),
        (CACHE, "no, I meant the desktop client"),
        (TRASH, "can I restore them?"),
        (TRASH, "and for guests?"),
        ("How long is the audit log kept on Business?", "can I export it?"),
        ("Which iOS version does the Northwind app need?", "and for Android?"),
        ("How many hosts does the Business plan need at minimum?", "and Enterprise?"),
    ],
)
def test_every_word_of_a_rewrite_is_the_users(previous: str, question: str) -> None:
    words = re.compile(r"[a-z0-9'-]+")
    said = set(words.findall(previous.lower())) | set(words.findall(question.lower()))
    query = standalone_query(question, [previous]).query
    assert set(words.findall(query.lower())) <= said | {"the", "on", "for"}
