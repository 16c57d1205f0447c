from __future__ import annotations

import pytest

from ragway.staff import Role, granting_role


@pytest.mark.parametrize(
    ("question", "phrase", "head"),
    [
        (
            "How much can a normal support agent refund me without asking a manager?",
            "normal support agent",
            "agent",
        ),
        (
            "What's the most a practice manager can write off if I can't pay?",
            "practice manager",
            "manager",
        ),
        (
            "How much goodwill credit is a support agent allowed to give me?",
            "support agent",
            "agent",
        ),
        (
            "What's the biggest refund a Tier 2 agent is allowed to approve?",
            "Tier 2 agent",
            "agent",
        ),
        ("How many times a term will the manager let us off the late fee?", "manager", "manager"),
        ("Before an officer can just write it off, how small must it be?", "officer", "officer"),
        ("Can a Contact Centre adviser waive my fee?", "Contact Centre adviser", "adviser"),
        ("What's the most a team leader can approve as goodwill?", "team leader", "team leader"),
    ],
)
def test_the_member_of_staff_whose_discretion_is_asked(
    question: str, phrase: str, head: str
) -> None:
    assert granting_role(question) == Role(phrase=phrase, head=head)


@pytest.mark.parametrize(
    "question",
    [
        # Staff named, but not as the one who grants.
        "Can an agent help me change my booking?",
        "I had a long chat with one of your agents. How long are chat transcripts kept?",
        "If I'm not happy with the branch manager's answer, who do I take it to next?",
        "How soon does the on-call engineer have to acknowledge a page?",
        # A customer granting, not staff.
        "How much credit can I give a friend?",
        # What any member of staff does for a customer, not at their discretion: a
        # public page says it without naming who does it.
        "Can an agent unlock my account?",
        "Can an agent put me through to billing?",
        "Can a manager issue a replacement card?",
    ],
)
def test_questions_that_ask_no_member_of_staff_what_they_may_grant(question: str) -> None:
    assert granting_role(question) is None


def test_a_page_speaks_of_a_role_by_its_head_noun_in_either_spelling() -> None:
    adviser = Role(phrase="Customer Relations adviser", head="adviser")
    assert adviser.named_in("Our advisors can issue Rail Travel Vouchers up to £50 per case.")
    assert adviser.named_in("Ask an adviser at the station.")
    assert not adviser.named_in("Our advice line is open 24 hours.")
    leader = Role(phrase="team leader", head="team leader")
    assert leader.named_in("Team-leaders approve goodwill over £100.")
    assert not leader.named_in("Our team will reply within 2 days; the leader board is weekly.")
    agent = Role(phrase="support agent", head="agent")
    assert agent.named_in("Support agents can credit up to $20.")
    assert not agent.named_in("Refunds go back to the card you paid with.")
