"""Families over mail (see `families.py`)."""

from __future__ import annotations

from collections.abc import Mapping

from families import (
    Family,
    PlanJson,
    Twin,
    archive_mail,
    ids_of,
    plan,
    step,
)
from tools import Version

MSGS = "${step1.count} messages."


def _summary(v: Mapping[str, object], ver: Version) -> PlanJson:
    find = step("find_messages", folder="inbox", time_window=v["window"])
    if ver.summarize:
        return plan(find, step("summarize_messages", ids=ids_of(1)), final="${step2.summary}")
    return plan(find, final="")  # empty answer: the finaliser asks the model to summarise


MAIL = (
    Family(
        name="mail_window",
        clauses=(("find", "messages"),),
        slots={"window": "window"},
        en=(
            "show my mail from {window}",
            "what mail did I get {window}?",
            "list my emails from {window}",
            "any new messages {window}?",
        ),
        it=("mostra la posta di {window}", "che email ho ricevuto {window}?"),
        plan=lambda v, ver: plan(
            step("find_messages", folder="inbox", time_window=v["window"]), final=MSGS
        ),
        twins=(
            Twin(values={"window": "yesterday"}, kind="temporal"),
            Twin(family="spam_window", kind="object"),
        ),
    ),
    Family(
        name="spam_window",
        clauses=(("find", "messages"),),
        slots={"window": "window"},
        en=("show my spam from {window}", "what landed in spam {window}?"),
        it=("mostra lo spam di {window}",),
        plan=lambda v, ver: plan(
            step("find_messages", folder="spam", time_window=v["window"]), final=MSGS
        ),
        twins=(Twin(family="mail_window", kind="object"),),
    ),
    Family(
        name="mail_from",
        clauses=(("find", "messages"),),
        slots={"sender": "sender"},
        en=(
            "show messages from {sender}",
            "emails from {sender}",
            "what did {sender} send me?",
            "list mail from {sender}",
        ),
        it=("mostra i messaggi di {sender}", "email da {sender}"),
        plan=lambda v, ver: plan(
            step("find_messages", folder="inbox", from_contains=v["sender"]), final=MSGS
        ),
        twins=(
            Twin(values={"sender": "bob@acme.io"}, kind="object"),
            Twin(family="archive_mail_from", kind="verb"),
        ),
    ),
    Family(
        name="mail_from_window",
        clauses=(("find", "messages"),),
        slots={"sender": "sender", "window": "window"},
        en=("show emails from {sender} {window}", "what did {sender} send me {window}?"),
        it=("email da {sender} {window}",),
        plan=lambda v, ver: plan(
            step(
                "find_messages", folder="inbox", time_window=v["window"], from_contains=v["sender"]
            ),
            final=MSGS,
        ),
        twins=(Twin(values={"window": "yesterday"}, kind="temporal"),),
    ),
    Family(
        name="search_mail",
        clauses=(("find", "messages"),),
        slots={"topic": "topic"},
        en=(
            "search my mail for {topic}",
            "find emails about {topic}",
            "any messages about {topic}?",
        ),
        it=("cerca nella posta {topic}", "trova le email sulla {topic}"),
        plan=lambda v, ver: plan(
            step("find_messages", folder="inbox", query=v["topic"]), final=MSGS
        ),
        twins=(Twin(values={"topic": "contract"}, kind="object"),),
    ),
    Family(
        name="mail_about_money",
        clauses=(("find", "messages"),),
        slots={},
        en=(
            "find the emails about money",
            "any mail about payments?",
            "show me money-related mail",
        ),
        it=("trova le email che parlano di soldi",),
        plan=lambda v, ver: plan(
            step("find_messages", folder="inbox", query="${FILLER:keyword}"),
            final=MSGS,
            fillers={
                "keyword": {"prompt": "one subject keyword for money matters", "default": "invoice"}
            },
        ),
        twins=(Twin(family="search_mail", kind="object"),),
    ),
    Family(
        name="summarise_mail",
        clauses=(("summarize", "messages"),),
        slots={"window": "window"},
        en=("summarise my mail from {window}", "give me a summary of my email from {window}"),
        it=("riassumi la posta di {window}",),
        plan=_summary,
        twins=(Twin(family="mail_window", kind="extra_clause"),),
    ),
    Family(
        name="archive_mail_from",
        clauses=(("archive", "messages"),),
        slots={"sender": "sender"},
        en=(
            "archive messages from {sender}",
            "archive all emails from {sender}",
            "put the mail from {sender} in the archive",
        ),
        it=("archivia i messaggi di {sender}",),
        plan=lambda v, ver: plan(
            step("find_messages", folder="inbox", from_contains=v["sender"]),
            archive_mail(1, ver, 1),
            final="Archived ${step2.moved}.",
        ),
        twins=(
            Twin(family="delete_mail_from_window", kind="verb"),
            Twin(values={"sender": "bob@acme.io"}, kind="object"),
        ),
        effectful=True,
    ),
    Family(
        name="delete_mail_from_window",
        clauses=(("delete", "messages"),),
        slots={"sender": "sender", "window": "window"},
        en=("delete emails from {sender} {window}", "remove the mail {sender} sent {window}"),
        it=("elimina le email di {sender} di {window}",),
        plan=lambda v, ver: plan(
            step(
                "find_messages", folder="inbox", time_window=v["window"], from_contains=v["sender"]
            ),
            step("delete_messages", 1, ids=ids_of(1)),
            final="Deleted ${step2.deleted}.",
        ),
        twins=(Twin(values={"window": "last_week"}, kind="temporal"),),
        effectful=True,
    ),
    Family(
        name="empty_spam",
        clauses=(("delete", "messages"),),
        slots={},
        en=("empty the spam folder", "delete all spam", "clear my spam", "get rid of the spam"),
        it=("svuota lo spam", "elimina tutto lo spam"),
        plan=lambda v, ver: plan(
            step("find_messages", folder="spam"),
            step("delete_messages", 1, ids=ids_of(1)),
            final="Deleted ${step2.deleted}.",
        ),
        twins=(Twin(family="spam_window", values={"window": "today"}, kind="verb"),),
        effectful=True,
    ),
    Family(
        name="send_note",
        clauses=(("send", "message"),),
        slots={"to": "to", "body": "body"},
        en=(
            'email {to} saying "{body}"',
            'send {to} a message: "{body}"',
            'write to {to}: "{body}"',
        ),
        it=('scrivi a {to}: "{body}"', 'manda una email a {to} con scritto "{body}"'),
        plan=lambda v, ver: plan(
            step("send_message", to=v["to"], body=v["body"]), final="Sent to ${step1.to}."
        ),
        twins=(Twin(values={"to": "dan@example.com"}, kind="object"),),
        effectful=True,
    ),
    Family(
        name="email_open_tasks",
        clauses=(("list", "tasks"), ("send", "message")),
        slots={"to": "to"},
        en=("email my open tasks to {to}", "send the list of open tasks to {to}"),
        it=("manda i task aperti a {to}",),
        plan=lambda v, ver: plan(
            step("list_tasks", status="open"),
            step("send_message", to=v["to"], body="${step1.@brief}"),
            final="Sent ${step1.count} tasks.",
        ),
        twins=(Twin(family="list_open_tasks", kind="extra_clause"),),
        effectful=True,
    ),
)
