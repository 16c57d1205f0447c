"""Misspelt question words spelt as the evidence spells them, and nothing else touched."""

from __future__ import annotations

from ragway.spelling import (
    compounds,
    dimensions,
    edit_distance,
    english_words,
    repair,
    shouted,
    suspects,
    unshout,
    vocabulary,
)

PAGES = vocabulary(
    [
        "The retriever listens on port 7101. Chunk ids are built from the slug of the",
        "heading path. Deleted files stay in the trash for 30 days on the Business plan.",
        "Bandwidth for an audio-only call is about 100 kbps.",
    ]
)


def test_misspelt_words_take_the_passages_spelling() -> None:
    assert repair("Which port does the retreiver lisen on?", PAGES) == (
        "Which port does the retriever listens on?"
    )
    assert repair("how are chunck ids bulit?", PAGES) == "how are chunk ids built?"
    assert repair("audio only call how much bandwith", PAGES) == (
        "audio only call how much bandwidth"
    )


def test_real_words_names_identifiers_and_short_words_stay() -> None:
    # "longest" is a word of its own, not "largest" misspelt, whatever the pages say.
    pages = vocabulary(["The largest upload is 2 GB. Files in LM-6001 are kept."])
    assert repair("what's the longest we can keep files", pages) == (
        "what's the longest we can keep files"
    )
    # A name the pages do not know stays unknown, so that the question can be refused.
    assert repair("How much is the Premiun plan?", vocabulary(["The Premium plan is $9."])) == (
        "How much is the Premiun plan?"
    )
    # An identifier one character off is another identifier.
    assert repair("What does LM-7002 mean?", pages) == "What does LM-7002 mean?"
    # Short words are too often another real word one edit away.
    assert repair("do pics get compressed", vocabulary(["Pins get compressed."])) == (
        "do pics get compressed"
    )


def test_a_word_too_far_from_every_passage_word_stays() -> None:
    assert repair("where are whiteboards kept?", PAGES) == "where are whiteboards kept?"


def test_a_repaired_word_keeps_its_capital_at_the_start() -> None:
    assert repair("Bandwith of an audio call?", PAGES) == "Bandwidth of an audio call?"


def test_edit_distance_counts_a_swap_as_one_edit_and_stops_past_the_budget() -> None:
    assert edit_distance("bulit", "built", 1) == 1
    assert edit_distance("retreiver", "retriever", 2) == 1
    assert edit_distance("trash", "trash", 0) == 0
    assert edit_distance("trash", "crush", 1) is None


def test_the_dictionary_is_the_embedding_models_whole_words() -> None:
    words = english_words()
    assert {"longest", "connector", "gesture"} <= words
    assert not {"verison", "bandwith", "retreiver"} & words


def test_a_misspelling_with_a_known_stem_takes_the_passages_spelling() -> None:
    # "insurence" stems like "insurance": before, it was left as it was (the embedding
    # model read it as unknown word pieces) because its stem was known.
    pages = vocabulary(["Can I add insurance? Yes, insurance is available on every carrier."])
    assert repair("max insurence per parcel?", pages) == "max insurance per parcel?"


def test_another_form_of_a_passage_word_is_no_misspelling() -> None:
    # None of these is a whole word of the model's vocabulary, so each was "repaired"
    # into the passages' form of its stem, and the retriever searched again for it.
    pages = vocabulary(
        [
            "Reusing a key with another body is refused. Configuration lives in YAML.",
            "Webhooks are signed. We page the on-call engineer. Keys expire after a year.",
        ]
    )
    for question in (
        "Can I reuse an idempotency key?",
        "How do I configure single sign-on?",
        "Is every webhook signed?",
        "Who gets paged at night?",
        "What is the key expiry?",
    ):
        assert repair(question, pages) == question
    # A letter left out inside a word is no other form: "month" takes "-ly", not "-y".
    pages = vocabulary(["Monthly payments: we split your premium into 12 monthly debits."])
    assert repair("can i pay monthy with my visa", pages) == "can i pay monthly with my visa"
    # A letter left off its end may be another form: "signup" beside "signups".
    assert repair("signup bonus", vocabulary(["Signups close on Friday."])) == "signup bonus"
    # Endings a misspelling swaps are no other form: "calenders" is "calendars".
    assert repair("sync calenders", vocabulary(["Connect your calendars."])) == "sync calendars"


def test_words_run_together_become_the_passages_two_words() -> None:
    texts = [
        "| Mozilla Firefox | 115 ESR | Screen sharing needs Firefox 121 |",
        "Set your time zone under Profile.",
    ]
    pages, joined = vocabulary(texts), compounds(texts)
    assert repair("firefox needed to screenshare", pages, joined=joined) == (
        "firefox needed to screen sharing"
    )
    assert repair("change my timezone", pages, joined=joined) == "change my time zone"
    # Only pairs the passages write side by side: "profileset" is no pair of theirs.
    assert repair("the profileset page", pages, joined=joined) == "the profileset page"
    # Without the pairs, nothing is split.
    assert repair("change my timezone", pages) == "change my timezone"


def test_the_words_read_once_per_passage_merge_as_reading_them_all_did() -> None:
    # Each passage's words and word pairs are cached; what a search gets from several
    # passages must not depend on that: counts add up over every passage (a passage
    # twice counts twice), the first passage that runs two words together names the
    # pair, and what a caller does to its result never reaches the cache.
    first = "Screen sharing needs the desktop app. Screen sharing is free."
    second = "Screen shares are logged. The desktop app is on Windows."
    counts = vocabulary([first, second, first])
    assert counts["screen"] == 5 and counts["desktop"] == 3 and counts["windows"] == 1
    joined = compounds([second, first])
    assert joined["screenshares"] == "screen shares"  # the second text's own pair
    assert joined["screenshare"] == "screen shares"  # the first text that has the key
    assert compounds([first, second])["screenshare"] == "screen sharing"
    counts["screen"] = 0
    joined["screenshare"] = "changed"
    assert vocabulary([first])["screen"] == 2
    assert compounds([first])["screenshare"] == "screen sharing"


def test_chat_shorthand_is_spelt_out_unless_the_passages_use_it() -> None:
    known = vocabulary(["Links expire after 48 hrs. Close the store before you leave."])
    assert repair("how many days b4 u close it", known) == "how many days before you close it"
    assert repair("if we just dont pay", known) == "if we just don't pay"
    # The passages write "hrs": the user's word is theirs, kept.
    assert repair("link good for how many hrs", known) == "link good for how many hrs"
    # In capitals inside a question it is a name or a code, not shorthand.
    assert repair("is the UR code valid", known) == "is the UR code valid"
    assert suspects("how many days b4 u close it")


def test_text_speak_is_spelt_out() -> None:
    # "txt", "wen", "nxt" and "fone" were no term any page has: the question hung on
    # words that are only the way it was typed.
    known = vocabulary(["We text you when you've used 80% of your data."])
    assert repair("wen do u txt me that my data is running low", known) == (
        "when do you text me that my data is running low"
    )
    assert repair("goin to florida nxt month how much to use my fone", known) == (
        "going to florida next month how much to use my phone"
    )


def test_a_number_for_a_syllable_and_a_clipped_road_are_spelt_out() -> None:
    # "some1" was a name with a digit no page has ("does not cover “some1”"), and
    # "incl" and "rd" words none has: each refused a question the pages answer.
    known = vocabulary(["Smoking in a bedroom: EUR 250. Kingsmere Road HWRC: 08:00-16:00."])
    assert repair("whats the charge if some1 smokes in the bedroom", known) == (
        "what's the charge if someone smokes in the bedroom"
    )
    assert repair("how many dietitian visits r incl in plus", known) == (
        "how many dietitian visits are including in plus"
    )
    assert repair("kingsmere rd tip opening times", known) == "kingsmere road tip opening times"


def test_a_letter_for_a_word_and_a_word_without_its_vowel_are_spelt_out() -> None:
    # "how much r visitor permits" asked a quantity ("how much") where "how much are"
    # asks a price; "hw much" asked nothing at all.
    known = vocabulary(["Visitor permits cost £2.50 a day. Book up to 3 months ahead."])
    assert repair("how much r visitor permits", known) == "how much are visitor permits"
    assert repair("hw much is a permit", known) == "how much is a permit"
    assert repair("how far ahead cn u book", known) == "how far ahead can you book"
    assert repair("wots the fine if i hav no permit", known) == (
        "what's the fine if i have no permit"
    )
    # In capitals it is a name or a code: "Plan R" is kept.
    assert repair("what does Plan R cost", known) == "what does Plan R cost"


def test_a_consonant_left_single_before_its_ending_takes_the_passages_spelling() -> None:
    # "scaning" was kept: "scans" on the same page made it look like another form of
    # a word the passages know, though they write "scanning".
    known = vocabulary(["Scanning is free. Scans don't use your print quota."])
    assert repair("is scaning free", known) == "is scanning free"
    # A form the passages do not write stays another form, as before.
    assert repair("is scaning free", vocabulary(["Scans are free."])) == "is scaning free"


def test_a_slip_no_passage_spells_takes_the_one_english_word_it_can_be() -> None:
    # "lenght" where the pages say "12 to 32 characters long": no passage word was near,
    # so the embedding model read "min/max password [unknown word pieces]".
    known = vocabulary(["Your password must be 12 to 32 characters long."])
    assert repair("min/max pasword lenght for online bankng?", known) == (
        "min/max password length for online banking?"
    )
    assert repair("whats the defualt pin", known) == "what's the default pin"
    # A name made from an English word and a letter is no slip of it, and a name one
    # slip from no English word stays as it is: the refusal must still see it.
    assert repair("does kinetica take cash", known) == "does kinetica take cash"
    assert repair("does zoomify work here", known) == "does zoomify work here"
    # A word spelt right that is no whole word of the model's vocabulary is one
    # changed letter from another word: no slip ("fallback" is not "fullback").
    assert repair("what do we keep as a fallback", known) == "what do we keep as a fallback"
    # Two English words one slip away: which one was meant is not known.
    assert repair("it accets cards", known) == "it accets cards"  # accepts, accents


def test_more_text_speak_is_spelt_out() -> None:
    known = vocabulary(["Resale tickets are refunded. Book 3 nights."])
    assert repair("can we get in early if we pay xtra", known) == (
        "can we get in early if we pay extra"
    )
    assert repair("i bought resale tix, can i book 3 nites", known) == (
        "i bought resale tickets, can i book 3 nights"
    )


def test_a_clipped_word_is_spelt_out_as_the_passages_write_it() -> None:
    # Refused before: "env" and "var" were in no passage, and the question hung on them.
    page = "Start the app with the environment variable NW_DISABLE_GPU=1."
    known = vocabulary([page])
    assert repair("which env var turns off the gpu", known) == (
        "which environment variable turns off the gpu"
    )
    # A page that writes the clipped word itself keeps the user's word.
    config = vocabulary(["Set retries in the config file."])
    assert repair("where is the config file", config) == "where is the config file"
    # Also in its plural: "admin" on a page of "Owners and Admins" is their word.
    admins = vocabulary(["Only Owners and Admins can export data."])
    assert repair("can an admin export data", admins) == "can an admin export data"


def test_a_question_in_capitals_takes_the_passages_casing() -> None:
    texts = ["Deleted files stay in the trash for 30 days on Business.", "SSO is on Business."]
    assert unshout("HOW LONG ARE DELETED FILES KEPT ON BUSINESS? DOES HS-204 MEAN SSO", texts) == (
        "how long are deleted files kept on Business? does HS-204 mean SSO"
    )
    # A question not in capitals, an acronym or a name in it included, is left alone.
    assert unshout("Does Business include SSO?", texts) == "Does Business include SSO?"
    assert not shouted("SSO on Business?") and shouted("CAN I GET SSO ON BUSINESS")


def test_a_size_is_written_as_the_passages_write_the_same_two_numbers() -> None:
    # Before: "12x12" was one word no passage has, a name the pages lack, and "What does
    # a 12x12 metal print cost?" was refused beside a table keyed "12 x 12".
    table = ["| Size (in) | Price ($) |\n|---|---|\n| 12 x 12 | 59.99 |\n| 8\u00d710 | 19.99 |"]
    assert dimensions("What does a 12x12 metal print cost?", table) == (
        "What does a 12 x 12 metal print cost?"
    )
    assert dimensions("and an 8 x 10?", table) == "and an 8\u00d710?"
    # Sizes no passage gives, and hex or versions, stay as typed.
    assert dimensions("What is a 5x7?", table) == "What is a 5x7?"
    assert dimensions("Is 0x1F allowed?", table) == "Is 0x1F allowed?"
