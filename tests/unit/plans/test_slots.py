"""Typed extractors, span alignment and the slot binder (plan-cache spec §3.6)."""

from __future__ import annotations

import pytest

from keel.plans.entities import classify, find_entities, has_absolute_time, looks_like_epoch
from keel.plans.normalise import normalise
from keel.plans.plan import Slot
from keel.plans.slots import BindMiss, Bound, align, bind, candidates


def kinds(text: str) -> list[tuple[str, object]]:
    return [(e.kind, e.value) for e in find_entities(text)]


def slot(kind: str, source: str | None, *, required: bool = True) -> Slot:
    return Slot(type=kind, source=source, required=required)


# --- typed extractors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("on 2024-05-17", "2024-05-17"),
        ("on 2024/05/17", "2024-05-17"),
        ("on 17.05.2024", "2024-05-17"),
        ("on May 17, 2024", "2024-05-17"),
        ("on may 17th 2024", "2024-05-17"),
        ("on 17 May 2024", "2024-05-17"),
        ("on the 17th of May, 2024", "2024-05-17"),
        ("on Sept. 3 2024", "2024-09-03"),
        ("in May 2024", "2024-05"),
        ("on May 17", "--05-17"),
        ("at 2024-05-17T10:30:00Z", "2024-05-17T10:30:00"),
        ("at 2024-05-17 10:30", "2024-05-17T10:30"),
        ("on 5/17/24", "2024-05-17"),
    ],
)
def test_dates_in_several_formats(text: str, value: str) -> None:
    assert kinds(text) == [("date", value)]
    assert has_absolute_time(text)


def test_slashed_dates_keep_both_readings() -> None:
    (entity,) = find_entities("05/06/2024")
    assert entity.value == "2024-05-06"
    assert entity.alts == ("2024-06-05",)
    (only,) = find_entities("17/05/2024")
    assert only.value == "2024-05-17" and only.alts == ()


@pytest.mark.parametrize("text", ["2024-02-30", "13/13/2024", "31.02.2024", "February 30, 2024"])
def test_impossible_dates_are_not_dates(text: str) -> None:
    assert not has_absolute_time(text)


@pytest.mark.parametrize(
    "text",
    ["today", "yesterday", "last week", "past 3 days", "2 weeks ago", "next monday", "tomorrow"],
)
def test_relative_words_are_windows_not_absolute(text: str) -> None:
    assert [e.kind for e in find_entities(f"files from {text}")] == ["time_window"]
    assert not has_absolute_time(text)


def test_window_counts_are_number_parts() -> None:
    (window,) = find_entities("files from the last seven days")
    assert window.value == "last 7 days"
    assert [(p.kind, p.value, p.text) for p in window.parts] == [("number", 7, "seven")]


@pytest.mark.parametrize(
    ("text", "value"), [("at 10:30", "10:30"), ("at 3pm", "15:00"), ("at 12:15 a.m.", "00:15")]
)
def test_times_of_day(text: str, value: str) -> None:
    assert kinds(text) == [("time", value)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("find PDFs", [("glob", "*.pdf")]),
        ("find pdf files", [("glob", "*.pdf")]),
        ("find text documents", [("glob", "*.txt")]),
        ("find python files", [("glob", "*.py")]),
        ("find CSVs and *.md", [("glob", "*.csv"), ("glob", "*.md")]),
        ("find report-??.txt", [("glob", "report-??.txt")]),
        ("are there files?", []),
    ],
)
def test_globs_and_file_type_words(text: str, expected: list[tuple[str, object]]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("open /tmp/a.txt", [("path", "/tmp/a.txt")]),
        ("open ~/notes", [("path", "~/notes")]),
        ("open docs/report.md", [("path", "docs/report.md")]),
        ("open C:\\Users\\ann", [("path", "C:\\Users\\ann")]),
        ("open report.pdf", [("path", "report.pdf")]),
        ("this and/or that", []),
        ("e.g. this", []),
    ],
)
def test_paths(text: str, expected: list[tuple[str, object]]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cancel order W1234567", [("id", "W1234567")]),
        ("close issue #40", [("id", "#40")]),
        ("invoice INV-2024-7", [("id", "INV-2024-7")]),
        ("delete task 40", [("number", 40)]),
        ("the 3rd item", []),
        ("sum 1,000 and 2.5 and five", [("number", 1000), ("number", 2.5), ("number", 5)]),
        ("mail Bob@Example.org", [("email", "bob@example.org")]),
        ("see https://x.org/a?b=1.", [("url", "https://x.org/a?b=1")]),
        ('rename it "Q3 report"', [("quoted", "Q3 report")]),
        ("don't rename 'old name'", [("quoted", "old name")]),
    ],
)
def test_ids_numbers_emails_urls_quotes(text: str, expected: list[tuple[str, object]]) -> None:
    assert kinds(text) == expected


def test_token_boundaries_not_substrings() -> None:
    assert kinds("task 40") == [("number", 40)]
    assert kinds("W1234") == [("id", "W1234")]
    assert align(4, "delete task 40") is None
    assert align("4", "delete task 40") is None
    assert align(4, "cancel W1234") is None
    assert align("task 4", "delete task 40") is None


def test_classify_needs_the_whole_value() -> None:
    entity = classify(" 2024-05-17 ")
    assert entity is not None and entity.kind == "date"
    assert classify("on 2024-05-17") is None


def test_epoch_range() -> None:
    assert looks_like_epoch(1_716_000_000)
    assert looks_like_epoch(1_716_000_000_000)
    assert not looks_like_epoch(8080)


# --- alignment -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "request_text", "kind", "span"),
    [
        (4, "delete task 4", "number", "4"),
        ("4", "delete task 4", "number:str", "4"),
        (5, "top five files", "number", "five"),
        ("#40", "close issue #40", "id", "#40"),
        ("40", "close issue #40", "id:bare", "#40"),
        (40, "close issue #40", "id:int", "#40"),
        ("bob@x.org", "mail Bob@X.org now", "email", "Bob@X.org"),
        ("Bob@X.org", "mail Bob@X.org now", "email:text", "Bob@X.org"),
        ("/tmp/a.txt", "open /tmp/a.txt", "path", "/tmp/a.txt"),
        ("*.pdf", "find PDFs", "glob", "PDFs"),
        ("PDFs", "find PDFs", "glob:text", "PDFs"),
        ("2024-05-17", "events on May 17, 2024", "date", "May 17, 2024"),
        ("2024-06-05", "events on 05/06/2024", "date:alt", "05/06/2024"),
        ("10:30", "remind me at 10:30", "time", "10:30"),
        ("yesterday", "mail from yesterday", "time_window", "yesterday"),
        ("Q3 report", 'rename it "Q3 report"', "quoted", '"Q3 report"'),
        ("Projects", "files in Projects", "text", "Projects"),
        ("projects", "files in Projects", "text:lower", "Projects"),
        ("bob smith", "mail Bob Smith", "text:lower", "Bob Smith"),
        (7, "files from last 7 days", "number", "7"),
    ],
)
def test_align_with_typed_normalisers(
    value: object, request_text: str, kind: str, span: str
) -> None:
    match = align(value, request_text)
    assert match is not None
    assert (match.type, match.text, match.value) == (kind, span, value)
    assert request_text[match.start : match.end] == span


@pytest.mark.parametrize(
    ("value", "request_text"),
    [
        (None, "x"),
        (True, "delete true"),
        ("", "delete"),
        ("   ", "delete"),
        ("/tmp/A", "ls /tmp/a"),  # paths keep their case
        ("2024-05-17", "events on May 17"),  # the year came from a clock
        ("Archive", "files in Projects"),
        ("/home/me/Projects", "files in Projects"),
        (2024, "events on 2024-05-17"),
    ],
)
def test_align_refuses_what_the_request_does_not_say(value: object, request_text: str) -> None:
    assert align(value, request_text) is None


# --- binding ---------------------------------------------------------------------------------


def test_bind_gives_the_new_requests_value_in_the_recorded_form() -> None:
    slots = {"n": slot("number", "4"), "s": slot("number:str", "4")}
    got = bind(slots, "delete task 5", source_request="delete task 4")
    assert isinstance(got, Bound)
    assert dict(got.values) == {"n": 5, "s": "5"}
    assert got.spans["n"] == (12, 13)


@pytest.mark.parametrize(
    ("kind", "source", "recorded", "request_text", "value"),
    [
        ("id", "#40", "close issue #40", "close issue #41", "#41"),
        ("id:bare", "#40", "close issue #40", "close issue #41", "41"),
        ("id:int", "#40", "close issue #40", "close issue #41", 41),
        ("email", "bob@x.org", "mail bob@x.org", "mail Al@Y.com", "al@y.com"),
        ("glob", "PDFs", "find PDFs", "find CSVs", "*.csv"),
        ("glob:text", "PDFs", "find PDFs", "find CSVs", "CSVs"),
        ("time_window", "yesterday", "mail from yesterday", "mail from last week", "last week"),
        ("date", "2024-05-17", "events on 2024-05-17", "events on June 3, 2024", "2024-06-03"),
        ("time", "10:30", "remind me at 10:30", "remind me at 4pm", "16:00"),
        ("quoted", '"a"', 'rename it "a"', 'rename it "b c"', "b c"),
        ("path", "/tmp/a", "open /tmp/a", "open ~/B.txt", "~/B.txt"),
        ("enum:inbox|archive|spam", "inbox", "mail in inbox", "mail in spam", "spam"),
        ("text", "Projects", "files in Projects", "files in Old Stuff", "Old Stuff"),
        ("text:lower", "Projects", "files in Projects", "files in Archive", "archive"),
    ],
)
def test_bind_each_slot_type(
    kind: str, source: str, recorded: str, request_text: str, value: object
) -> None:
    got = bind({"x": slot(kind, source)}, request_text, source_request=recorded)
    assert isinstance(got, Bound), got
    assert got.values["x"] == value


def test_bind_name_slot_from_a_gazetteer() -> None:
    slots = {"who": slot("name:contacts", "Ann")}
    got = bind(
        slots, "call Bob", source_request="call Ann", gazetteers={"contacts": ["Ann", "Bob"]}
    )
    assert isinstance(got, Bound) and got.values["who"] == "Bob"
    missing = bind(slots, "call Eve", source_request="call Ann", gazetteers={"contacts": ["Ann"]})
    assert isinstance(missing, BindMiss) and missing.reason == "binder_missing_slot"


def test_missing_required_slot() -> None:
    got = bind({"n": slot("number", "4")}, "delete the task", source_request="delete task 4")
    assert isinstance(got, BindMiss) and got.reason == "binder_missing_slot"


def test_missing_optional_slot_is_left_out() -> None:
    slots = {"n": slot("number", "4"), "who": slot("email", "a@b.co", required=False)}
    got = bind(slots, "delete task 5", source_request="delete task 4 for a@b.co")
    assert isinstance(got, Bound) and dict(got.values) == {"n": 5}
    got = bind(slots, "delete task 5", source_request="delete task 4")
    assert isinstance(got, Bound) and dict(got.values) == {"n": 5}


def test_two_candidates_without_context_are_ambiguous() -> None:
    got = bind({"n": slot("number", "4")}, "7 or 8", source_request="4")
    assert isinstance(got, BindMiss) and got.reason == "binder_ambiguous"


def test_context_tells_two_candidates_apart() -> None:
    slots = {"src": slot("path", "a.txt"), "dst": slot("path", "b.txt")}
    got = bind(slots, "move c.txt to d.txt", source_request="move a.txt to b.txt")
    assert isinstance(got, Bound)
    assert dict(got.values) == {"src": "c.txt", "dst": "d.txt"}
    swapped = bind(slots, "to d.txt move c.txt", source_request="move a.txt to b.txt")
    assert isinstance(swapped, Bound)
    assert dict(swapped.values) == {"src": "c.txt", "dst": "d.txt"}


def test_coverage_rejects_an_extra_entity() -> None:
    slots = {"n": slot("number", "4")}
    got = bind(slots, "delete task 4 and 5", source_request="delete task 4")
    assert isinstance(got, BindMiss) and got.reason == "binder_coverage"
    assert "5" in got.detail
    assert isinstance(bind(slots, "delete task 4", source_request="delete task 4"), Bound)


def test_coverage_rejects_a_template_entity_the_request_no_longer_says() -> None:
    # top_k=5 stayed structural: "top 5" against "top 7" or against nothing is refused
    got = bind({}, "top 7 files", source_request="top 5 files")
    assert isinstance(got, BindMiss) and got.reason == "binder_coverage"
    got = bind({}, "top files", source_request="top 5 files")
    assert isinstance(got, BindMiss) and got.reason == "binder_coverage"
    assert isinstance(bind({}, "top 5 files please", source_request="top 5 files"), Bound)


def test_coverage_compares_what_a_part_slot_left_of_a_window() -> None:
    slots = {"d": slot("number", "7")}
    got = bind(slots, "files from last 30 days", source_request="files from last 7 days")
    assert isinstance(got, Bound) and got.values["d"] == 30
    got = bind(slots, "files from last 7 weeks", source_request="files from last 7 days")
    assert isinstance(got, BindMiss) and got.reason == "binder_coverage"


def test_coverage_can_be_switched_off() -> None:
    slots = {"n": slot("number", "4")}
    got = bind(slots, "delete task 4 and 5", source_request="delete task 4", coverage=False)
    assert isinstance(got, Bound)


@pytest.mark.parametrize(
    ("recorded", "request_text"),
    [
        ("delete task 4", "don't delete task 5"),
        ("do not send it to a@b.co", "send it to c@d.co"),
        ("show mail from a@b.co", "show unread mail from c@d.co"),
        ("enable alerts for #4", "disable alerts for #5"),
        ("files modified before 2 days ago", "files modified after 2 days ago"),
        ("list files except *.pdf", "list files *.pdf"),
    ],
)
def test_polarity_change_is_refused(recorded: str, request_text: str) -> None:
    slots = {
        f"s{i}": slot(e.kind, e.text)
        for i, e in enumerate(x for x in candidates(recorded) if not x.parts)
    }
    got = bind(slots, request_text, source_request=recorded)
    assert isinstance(got, BindMiss) and got.reason == "polarity", got
    assert isinstance(bind(slots, recorded, source_request=recorded), Bound)


def test_plain_antonym_word_alone_is_no_polarity_change() -> None:
    got = bind({}, "list the files", source_request="show the files")
    assert isinstance(got, Bound)


def test_polarity_ignores_words_inside_slot_spans() -> None:
    slots = {"q": slot("quoted", '"do not disturb"')}
    got = bind(slots, 'rename it "quiet"', source_request='rename it "do not disturb"')
    assert isinstance(got, Bound) and got.values["q"] == "quiet"


def test_polarity_can_be_switched_off() -> None:
    got = bind({}, "don't list the files", source_request="list the files", polarity=False)
    assert isinstance(got, Bound)


def test_two_slots_may_not_take_the_same_words() -> None:
    slots = {"a": slot("text", "x"), "b": slot("path", "/t")}
    got = bind(slots, "put /u in", source_request="put x in /t")
    assert isinstance(got, BindMiss)


def test_binder_works_against_a_normalised_recorded_request() -> None:
    slots = {"folder": slot("text", "Projects"), "n": slot("number", "4")}
    recorded = normalise("Please show the 4 newest files in Projects!")
    got = bind(slots, "show the 9 newest files in Archive", source_request=recorded)
    assert isinstance(got, Bound)
    assert dict(got.values) == {"folder": "Archive", "n": 9}


def test_text_slot_stops_at_a_clause_separator() -> None:
    slots = {"f": slot("text", "Projects")}
    got = bind(slots, "files in Old Stuff and more", source_request="files in Projects")
    assert isinstance(got, Bound) and got.values["f"] == "Old Stuff"


def test_text_slot_without_its_neighbours_is_missing() -> None:
    slots = {"f": slot("text", "Projects")}
    got = bind(slots, "show the Archive folder", source_request="files in Projects")
    assert isinstance(got, BindMiss) and got.reason == "binder_missing_slot"


def test_unknown_slot_type_is_missing() -> None:
    got = bind({"x": slot("colour", "red")}, "paint it red", source_request="paint it red")
    assert isinstance(got, BindMiss) and got.reason == "binder_missing_slot"


# --- absolute dates, time words and file types against a template (bench defects) --------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("events on 3/5", "--03-05"),
        ("events in March", "--03"),
        ("events during the month of april", "--04"),
        ("events on the 5th", "---05"),
        ("due by the 31st", "---31"),
    ],
)
def test_dates_without_a_year(text: str, value: str) -> None:
    assert kinds(text) == [("date", value)]
    assert has_absolute_time(text)


@pytest.mark.parametrize("text", ["you may delete it", "the 3rd task", "on the 32nd", "I march"])
def test_words_that_only_look_like_dates(text: str) -> None:
    assert not has_absolute_time(text)


@pytest.mark.parametrize(
    "request_text",
    [
        "show my events on 2026-03-05",
        "show my events on March 5, 2026",
        "show my events on 5 March 2026",
        "show my events on 3/5",
        "show my events on the 5th",
        "show my events in March",
        "show my events",
    ],
)
def test_an_absolute_date_no_slot_takes_is_a_coverage_miss(request_text: str) -> None:
    result = bind({}, request_text, source_request="show tomorrow's events")
    assert isinstance(result, BindMiss) and result.reason == "binder_coverage"


@pytest.mark.parametrize(
    ("recorded", "request_text"),
    [
        ("show tomorrow's events", "show today's events"),
        ("show my mail from yesterday", "show my mail from last week"),
        ("show my mail from last week", "show my mail from today"),
        ("show my mail", "show my mail from yesterday"),
        ("show my mail from today", "show my mail"),
        ("list files from the last 3 days", "list files from 3 weeks ago"),
        ("show my mail from a week ago", "show my mail from an hour ago"),
    ],
)
def test_a_relative_time_pivot_is_a_coverage_miss(recorded: str, request_text: str) -> None:
    result = bind({}, request_text, source_request=recorded)
    assert isinstance(result, BindMiss) and result.reason == "binder_coverage"


def test_the_same_time_word_and_a_time_slot_still_bind() -> None:
    assert isinstance(
        bind({}, "SHOW tomorrow's events", source_request="show tomorrow's events"), Bound
    )
    window = {"when": slot("time_window", "yesterday")}
    result = bind(
        window, "show my mail from last week", source_request="show my mail from yesterday"
    )
    assert isinstance(result, Bound) and result.values == {"when": "last week"}


def test_a_free_text_slot_takes_no_time_its_recording_did_not_hold() -> None:
    title = {"title": slot("text", "buy milk")}
    recorded = "remind me to buy milk"
    for said in ("remind me to buy milk tomorrow", "remind me to buy bread on 2026-03-05"):
        result = bind(title, said, source_request=recorded)
        assert isinstance(result, BindMiss) and result.reason == "binder_coverage", said
    result = bind(title, "remind me to buy bread", source_request=recorded)
    assert isinstance(result, Bound) and result.values == {"title": "buy bread"}
    dated = {"title": slot("text", "pay rent today")}
    result = bind(
        dated, "remind me to pay rent tomorrow", source_request="remind me to pay rent today"
    )
    assert isinstance(result, Bound) and result.values == {"title": "pay rent tomorrow"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("list TMP files in /tmp", [("glob", "*.tmp"), ("path", "/tmp")]),
        ("list tmp files", [("glob", "*.tmp")]),
        ("find xlsx documents", [("glob", "*.xlsx")]),
        ("find MP3 files", [("glob", "*.mp3")]),
        ("find HEIC docs", [("glob", "*.heic")]),
        ("find AVIF files", [("glob", "*.avif")]),  # an acronym, known or not
        ("list files ending in .tmp", [("glob", "*.tmp")]),
        ("open .zshrc", [("path", ".zshrc")]),
        ("LIST ALL FILES", []),
        ("list my files", []),
        ("show old files", []),
        ("find data files", []),  # a plain lower-case word is no type
    ],
)
def test_extension_words_before_a_file_word_are_globs(
    text: str, expected: list[tuple[str, object]]
) -> None:
    assert kinds(text) == expected


def test_an_unknown_file_type_is_a_coverage_miss_unless_a_slot_takes_it() -> None:
    folder = {"folder": slot("path", "/tmp")}
    for said in ("list TMP files in /tmp", "list CSV files in /tmp", "list xlsx files in /tmp"):
        result = bind(folder, said, source_request="list files in /tmp")
        assert isinstance(result, BindMiss) and result.reason == "binder_coverage", said
    match = align("*.tmp", "list TMP files in /tmp")
    assert match is not None and (match.type, match.text) == ("glob", "TMP files")
    typed = {"folder": slot("path", "/tmp"), "pattern": slot("glob", "TMP files")}
    result = bind(typed, "list CSV files in /docs", source_request="list TMP files in /tmp")
    assert isinstance(result, Bound)
    assert result.values == {"folder": "/docs", "pattern": "*.csv"}


# --- Italian -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("recorded", "request_text"),
    [
        ("cancella il task 4", "non cancellare il task 5"),
        ("manda il file a a@b.co", "non mandare mai il file a c@d.co"),
        ("elenca i file *.pdf", "elenca i file tranne *.pdf"),
        ("mostra la posta di a@b.co", "mostra la posta non letta di c@d.co"),
        ("attiva gli avvisi per #4", "disattiva gli avvisi per #5"),
        ("includi i file *.pdf", "escludi i file *.txt"),
        ("manda il report a a@b.co", "manda il report senza allegati a c@d.co"),
    ],
)
def test_italian_polarity_change_is_refused(recorded: str, request_text: str) -> None:
    slots = {
        f"s{i}": slot(e.kind, e.text)
        for i, e in enumerate(x for x in candidates(recorded) if not x.parts)
    }
    got = bind(slots, request_text, source_request=recorded)
    assert isinstance(got, BindMiss) and got.reason == "polarity", got
    assert isinstance(bind(slots, recorded, source_request=recorded), Bound)


@pytest.mark.parametrize(
    ("recorded", "request_text"),
    [
        ("mostra gli eventi di domani", "mostra gli eventi di oggi"),
        ("mostra la posta di ieri", "mostra la posta della settimana scorsa"),
        ("mostra la posta della settimana scorsa", "mostra la posta di questa settimana"),
        ("mostra la posta", "mostra la posta di ieri"),
        ("elenca i file degli ultimi 3 giorni", "elenca i file di 3 settimane fa"),
    ],
)
def test_an_italian_relative_time_pivot_is_a_coverage_miss(
    recorded: str, request_text: str
) -> None:
    result = bind({}, request_text, source_request=recorded)
    assert isinstance(result, BindMiss) and result.reason == "binder_coverage"
    assert isinstance(bind({}, recorded, source_request=recorded), Bound)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *(("oggi", "oggi"), ("ieri", "ieri"), ("domani", "domani")),
        *(("la settimana scorsa", "la settimana scorsa"), ("questa settimana", "questa settimana")),
        *(("gli ultimi 3 giorni", "gli ultimi 3 giorni"), ("due giorni fa", "2 giorni fa")),
    ],
)
def test_italian_relative_words_are_windows_not_absolute(text: str, value: str) -> None:
    found = [e for e in find_entities(f"posta di {text}") if e.kind == "time_window"]
    assert [e.value for e in found] == [value]
    assert not has_absolute_time(f"posta di {text}")


def test_italian_dates_bind_a_date_slot() -> None:
    assert [e.value for e in find_entities("eventi del 5 marzo 2026") if e.kind == "date"] == [
        "2026-03-05"
    ]
    slots = {"d": slot("date", "5 marzo 2026")}
    got = bind(slots, "eventi del 7 aprile 2026", source_request="eventi del 5 marzo 2026")
    assert isinstance(got, Bound) and got.values["d"] == "2026-04-07"
