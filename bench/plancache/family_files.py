"""Families over files and the calendar (see `families.py`)."""

from __future__ import annotations

from families import Family, Twin, paths_of, plan, step

COUNT = "${step1.count} files."

FILES = (
    Family(
        name="list_files",
        clauses=(("list", "files"),),
        slots={"folder": "folder"},
        en=(
            "list files in {folder}",
            "show the files in {folder}",
            "what files are in {folder}?",
            "what's inside {folder}",
        ),
        it=("elenca i file in {folder}", "quali file ci sono in {folder}?"),
        plan=lambda v, ver: plan(step("list_files", base_path=v["folder"]), final=COUNT),
        twins=(
            Twin(values={"folder": "/photos"}, kind="object"),
            Twin(family="list_files_glob", kind="extra_clause"),
        ),
    ),
    Family(
        name="list_files_glob",
        clauses=(("list", "files"),),
        slots={"glob": "glob", "folder": "folder"},
        en=(
            "list {glob} files in {folder}",
            "show the {glob} files in {folder}",
            "find the {glob} files under {folder}",
        ),
        it=("elenca i file {glob} in {folder}", "trova i file {glob} in {folder}"),
        plan=lambda v, ver: plan(
            step("list_files", base_path=v["folder"], pattern=v["glob"]), final=COUNT
        ),
        twins=(
            Twin(family="list_files_excluding", kind="polarity"),
            Twin(family="delete_files_glob", kind="verb"),
        ),
    ),
    Family(
        name="list_files_excluding",
        clauses=(("list", "files"),),
        slots={"glob": "glob", "folder": "folder"},
        en=(
            "list files in {folder} except {glob}",
            "list files in {folder} not matching {glob}",
            "show files in {folder} excluding {glob}",
        ),
        it=("elenca i file in {folder} tranne {glob}",),
        plan=lambda v, ver: plan(
            step("list_files", base_path=v["folder"], exclude=v["glob"]), final=COUNT
        ),
        twins=(Twin(family="list_files_glob", kind="polarity"),),
    ),
    Family(
        name="recent_files",
        clauses=(("list", "files"),),
        slots={"folder": "folder", "window": "window"},
        en=("list files in {folder} modified {window}", "which files in {folder} changed {window}"),
        it=("file in {folder} modificati {window}",),
        plan=lambda v, ver: plan(
            step("list_files", base_path=v["folder"], time_window=v["window"]), final=COUNT
        ),
        twins=(Twin(values={"window": "yesterday"}, kind="temporal"),),
    ),
    Family(
        name="read_file",
        clauses=(("read", "file"),),
        slots={"path": "path"},
        en=("read {path}", "open {path}", "show me the contents of {path}", "what's in {path}?"),
        it=("leggi {path}", "apri {path}"),
        plan=lambda v, ver: plan(step("read_file", path=v["path"]), final="${step1.text}"),
        twins=(Twin(family="delete_file", kind="verb"),),
    ),
    Family(
        name="delete_file",
        clauses=(("delete", "file"),),
        slots={"path": "path"},
        en=("delete {path}", "remove {path}", "erase the file {path}"),
        it=("elimina {path}", "cancella il file {path}"),
        plan=lambda v, ver: plan(
            step("delete_files", paths=[v["path"]]), final="Deleted ${step1.deleted}."
        ),
        twins=(Twin(family="read_file", kind="verb"), Twin(family="move_file", kind="verb")),
        effectful=True,
    ),
    Family(
        name="move_file",
        clauses=(("move", "file"),),
        slots={"path": "path", "dest": "dest"},
        en=(
            "move {path} to {dest}",
            "put {path} into {dest}",
            "move the file {path} over to {dest}",
        ),
        it=("sposta {path} in {dest}",),
        plan=lambda v, ver: plan(
            step("move_file", path=v["path"], dest=v["dest"]), final="Moved ${step1.moved}."
        ),
        twins=(Twin(values={"dest": "/docs"}, kind="object"),),
        effectful=True,
    ),
    Family(
        name="archive_files_glob",
        clauses=(("archive", "files"),),
        slots={"glob": "glob", "folder": "folder"},
        en=(
            "archive {glob} files in {folder}",
            "archive all the {glob} files under {folder}",
            "put the {glob} files of {folder} in the archive",
        ),
        it=("archivia i file {glob} in {folder}",),
        plan=lambda v, ver: plan(
            step("list_files", base_path=v["folder"], pattern=v["glob"]),
            step("archive_files", 1, paths=paths_of(1)),
            final="Archived ${step2.archived}.",
        ),
        twins=(Twin(family="delete_files_glob", kind="verb"),),
        effectful=True,
    ),
    Family(
        name="delete_files_glob",
        clauses=(("delete", "files"),),
        slots={"glob": "glob", "folder": "folder"},
        en=(
            "delete {glob} files in {folder}",
            "remove all {glob} files from {folder}",
            "clean up the {glob} files in {folder}",
        ),
        it=("elimina i file {glob} in {folder}",),
        plan=lambda v, ver: plan(
            step("list_files", base_path=v["folder"], pattern=v["glob"]),
            step("delete_files", 1, paths=paths_of(1)),
            final="Deleted ${step2.deleted}.",
        ),
        twins=(
            Twin(family="archive_files_glob", kind="verb"),
            Twin(family="list_files_glob", kind="verb"),
        ),
        effectful=True,
    ),
)

CALENDAR = (
    Family(
        name="events_on_date",
        clauses=(("list", "events"),),
        slots={"date": "date"},
        en=("what's on my calendar on {date}?", "show my events on {date}", "am I busy on {date}?"),
        it=("cosa ho in calendario il {date}?", "impegni del {date}"),
        plan=lambda v, ver: plan(
            step("list_events", date=v["date"]), final="${step1.count} events."
        ),
        twins=(Twin(values={"date": "2026-03-10"}, kind="temporal"),),
    ),
    Family(
        name="events_today",
        clauses=(("list", "events"),),
        slots={},
        en=("what's on my calendar today?", "show today's events", "my agenda for today"),
        it=("cosa ho in agenda oggi?",),
        plan=lambda v, ver: plan(
            step("list_events", date="${RUNTIME:today}"), final="${step1.count} events."
        ),
        twins=(Twin(family="events_tomorrow", kind="temporal"),),
    ),
    Family(
        name="events_tomorrow",
        clauses=(("list", "events"),),
        slots={},
        en=("what's on my calendar tomorrow?", "show tomorrow's events"),
        it=("cosa ho in agenda domani?",),
        plan=lambda v, ver: plan(
            step("list_events", date="${RUNTIME:now_plus_1d}"), final="${step1.count} events."
        ),
        twins=(Twin(family="events_today", kind="temporal"),),
    ),
    Family(
        name="create_event",
        clauses=(("create", "event"),),
        slots={"event": "event", "date": "date", "time": "time"},
        en=(
            'schedule "{event}" on {date} at {time}',
            'add "{event}" to my calendar on {date} at {time}',
            'book "{event}" for {date} at {time}',
        ),
        it=('fissa "{event}" il {date} alle {time}',),
        plan=lambda v, ver: plan(
            step("create_event", title=v["event"], date=v["date"], time=v["time"]),
            final="Scheduled ${step1.id}.",
        ),
        twins=(Twin(values={"time": "15:30"}, kind="number"),),
        effectful=True,
    ),
    Family(
        name="cancel_event",
        clauses=(("cancel", "event"),),
        slots={"event": "event", "date": "date"},
        en=('cancel "{event}" on {date}', 'call off "{event}" on {date}'),
        it=('annulla "{event}" del {date}',),
        plan=lambda v, ver: plan(
            step("list_events", date=v["date"], title=v["event"]),
            step("cancel_event", 1, event_id="${step1.entries.0.id}"),
            final="Cancelled ${step2.cancelled}.",
        ),
        twins=(Twin(values={"date": "2026-03-10"}, kind="temporal"),),
        effectful=True,
    ),
)
