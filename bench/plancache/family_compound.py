"""Compound requests of 3 to 6 clauses (see `families.py`)."""

from __future__ import annotations

from collections.abc import Mapping

from families import Family, PlanJson, Twin, archive_mail, plan, step, task_list_answer
from tools import Version


def _brief_day(v: Mapping[str, object], ver: Version) -> PlanJson:
    return plan(
        step("list_tasks", status="open"),
        step("list_events", date="${RUNTIME:today}"),
        step("find_messages", folder="inbox", time_window="today"),
        final="${step1.count} tasks, ${step2.count} events, ${step3.count} messages.",
    )


def _office_day(v: Mapping[str, object], ver: Version) -> PlanJson:
    return plan(
        step("list_events", date="${RUNTIME:today}"),
        step("list_tasks", status="open"),
        step("find_messages", folder="inbox", from_contains=v["sender"]),
        archive_mail(3, ver, 3),
        step("disable_feature", feature=v["feature"]),
        step("create_task", title=v["title"]),
        final="${step1.count} events, ${step2.count} tasks; archived ${step4.moved}.",
    )


COMPOUND = (
    Family(
        name="morning_brief",
        clauses=(("list", "tasks"), ("list", "events"), ("find", "messages")),
        slots={},
        en=(
            "list my open tasks, show today's events and show my mail from today",
            "give me my open tasks, today's calendar and today's mail",
        ),
        it=("elenca i task aperti, mostra gli eventi di oggi e la posta di oggi",),
        plan=_brief_day,
        twins=(Twin(family="list_open_tasks", kind="extra_clause"),),
    ),
    Family(
        name="triage_sender",
        clauses=(("find", "messages"), ("archive", "messages"), ("create", "task")),
        slots={"sender": "sender", "title": "title"},
        en=(
            'find emails from {sender}, archive them and add a task "{title}"',
            'archive the mail from {sender} and create a task "{title}"',
        ),
        it=('trova le email di {sender}, archiviale e aggiungi un task "{title}"',),
        plan=lambda v, ver: plan(
            step("find_messages", folder="inbox", from_contains=v["sender"]),
            archive_mail(1, ver, 1),
            step("create_task", title=v["title"]),
            final="Archived ${step2.moved}; created ${step3.id}.",
        ),
        twins=(Twin(family="archive_mail_from", kind="extra_clause"),),
        effectful=True,
    ),
    Family(
        name="cleanup_and_report",
        clauses=(("list", "files"), ("delete", "files"), ("send", "message")),
        slots={"glob": "glob", "folder": "folder", "to": "to"},
        en=(
            "list {glob} files in {folder}, delete them and email the list to {to}",
            "find the {glob} files in {folder}, remove them, then send {to} the list",
        ),
        it=("trova i file {glob} in {folder}, eliminali e manda la lista a {to}",),
        plan=lambda v, ver: plan(
            step("list_files", base_path=v["folder"], pattern=v["glob"]),
            step("delete_files", 1, paths="${step1.entries.*.path}"),
            step("send_message", to=v["to"], body="${step1.@brief}"),
            final="Deleted ${step2.deleted}, told ${step3.to}.",
        ),
        twins=(Twin(family="delete_files_glob", kind="extra_clause"),),
        effectful=True,
    ),
    Family(
        name="task_batch",
        clauses=(
            ("complete", "task"),
            ("reopen", "task"),
            ("enable", "feature"),
            ("list", "tasks"),
            ("send", "message"),
        ),
        slots={"task": "task", "task2": "task2", "feature": "feature", "to": "to"},
        en=(
            "complete task {task}, reopen task {task2}, enable {feature}, "
            "list my open tasks and email them to {to}",
            "finish task {task}, reopen {task2}, turn on {feature}, "
            "then send my open tasks to {to}",
        ),
        it=(
            "completa il task {task}, riapri il task {task2}, attiva {feature}, "
            "elenca i task aperti e mandali a {to}",
        ),
        plan=lambda v, ver: plan(
            step("complete_task", task_id=v["task"]),
            step("reopen_task", task_id=v["task2"]),
            step("enable_feature", feature=v["feature"]),
            step("list_tasks", status="open"),
            step("send_message", to=v["to"], body="${step4.@brief}"),
            final=task_list_answer(ver, 4),
        ),
        twins=(Twin(values={"task": 40}, kind="number"),),
        effectful=True,
    ),
    Family(
        name="office_day",
        clauses=(
            ("list", "events"),
            ("list", "tasks"),
            ("find", "messages"),
            ("archive", "messages"),
            ("disable", "feature"),
            ("create", "task"),
        ),
        slots={"sender": "sender", "feature": "feature", "title": "title"},
        en=(
            "show today's events, list my open tasks, find mail from {sender}, archive it, "
            'disable {feature} and add a task "{title}"',
        ),
        it=(
            "mostra gli eventi di oggi, elenca i task aperti, trova la posta di {sender}, "
            'archiviala, disattiva {feature} e aggiungi un task "{title}"',
        ),
        plan=_office_day,
        twins=(Twin(values={"feature": "auto_backup"}, kind="object"),),
        effectful=True,
    ),
)
