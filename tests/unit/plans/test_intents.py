"""The model-free lexical intent extractor (plan-cache spec §3.7, design note B1)."""

from __future__ import annotations

import pytest

from keel.plans.catalog import Catalog, catalog_of, plan_tool
from keel.plans.intent import Clause, Intent
from keel.plans.intents import IntentExtractor
from keel.tools.contract import ToolContract

READ = ToolContract(effect="read_only")


def _catalog() -> Catalog:
    tools = {
        "find_files": READ,
        "delete_files": ToolContract(effect="delete"),
        "list_orders": READ,
        "read_order": READ,
        "cancel_order": ToolContract(effect="write", verbs=("call off",)),
        "find_messages": READ,
        "send_message": ToolContract(effect="send"),
        "delete_task": ToolContract(effect="delete"),
        "list_tasks": READ,
        "archive_message": ToolContract(effect="write"),
        "write_files_spreadsheet": ToolContract(effect="write"),
    }
    return catalog_of(plan_tool(name, {}, contract) for name, contract in tools.items())


@pytest.fixture(scope="module")
def extractor() -> IntentExtractor:
    return IntentExtractor.for_catalog(_catalog())


def sig(extractor: IntentExtractor, text: str) -> str:
    return extractor.extract(text).signature


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("delete task 4", "delete:task"),
        ("cancel my order W1234567", "cancel:order"),
        ("list my orders", "list:orders"),
        ("find the PDFs in /tmp", "find:files"),
        ("archive the message from Bob", "archive:message"),
    ],
)
def test_single_clause(extractor: IntentExtractor, text: str, expected: str) -> None:
    assert sig(extractor, text) == expected


def test_compound_request_gives_clauses_in_text_order(extractor: IntentExtractor) -> None:
    intent = extractor.extract("find the PDFs in /tmp and delete them")
    assert intent.clauses == (
        Clause(verb="find", object="files"),
        Clause(verb="delete", object="files"),
    )
    assert sig(extractor, "list my tasks then cancel order 5") == "list:tasks>cancel:order"
    assert sig(extractor, "cancel order 5 then list my tasks") == "cancel:order>list:tasks"


def test_find_x_and_delete_y_is_two_clauses(extractor: IntentExtractor) -> None:
    assert sig(extractor, "find messages from bob and delete task 4") == (
        "find:messages>delete:task"
    )


def test_joined_verbs_share_the_next_object(extractor: IntentExtractor) -> None:
    assert sig(extractor, "find and delete old files") == "find:files>delete:files"


def test_pronoun_takes_the_previous_object(extractor: IntentExtractor) -> None:
    assert sig(extractor, "find my orders and cancel them") == "list:orders>cancel:order"


def test_negation_before_a_verb_marks_the_clause(extractor: IntentExtractor) -> None:
    intent = extractor.extract("find the files but don't delete them")
    assert [c.negated for c in intent.clauses] == [False, True]
    assert intent.signature == "find:files>!delete:files"
    assert intent.verbs == frozenset({"find"})
    assert extractor.extract("do not cancel the order").clauses[0].negated
    assert extractor.extract("never send the message").clauses[0].negated


def test_negation_does_not_cross_a_clause_separator(extractor: IntentExtractor) -> None:
    intent = extractor.extract("don't list tasks and delete task 4")
    assert [c.negated for c in intent.clauses] == [True, False]


@pytest.mark.parametrize(
    "text", ["remove task 4", "erase task 4", "get rid of task 4", "trash task 4"]
)
def test_built_in_synonyms_map_to_the_catalog_verb(extractor: IntentExtractor, text: str) -> None:
    assert sig(extractor, text) == "delete:task"


def test_contract_verbs_map_to_the_tool_head(extractor: IntentExtractor) -> None:
    assert sig(extractor, "call off order 5") == "cancel:order"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("show my orders", "list:orders"),  # show -> the producer the object has
        ("find my orders", "list:orders"),  # find is a head, but not for orders
        ("look up my messages", "find:messages"),
        ("show my tasks", "list:tasks"),
    ],
)
def test_producer_group_picks_the_verb_whose_tool_takes_the_object(
    extractor: IntentExtractor, text: str, expected: str
) -> None:
    assert sig(extractor, text) == expected


def test_objects_match_singular_and_plural(extractor: IntentExtractor) -> None:
    assert sig(extractor, "delete tasks 4 and 5") == "delete:task"
    assert sig(extractor, "read orders") == "read:order"
    assert sig(extractor, "write the files spreadsheet") == "write:files_spreadsheet"


def test_object_noun_groups(extractor: IntentExtractor) -> None:
    assert sig(extractor, "show my emails") == "find:messages"
    assert sig(extractor, "find documents about taxes") == "find:files"
    assert sig(extractor, "find the PDFs") == "find:files"


def test_images_are_not_files(extractor: IntentExtractor) -> None:
    assert sig(extractor, "find my images") != "find:files"


def test_verb_and_object_word_is_an_object_when_a_clause_waits(
    extractor: IntentExtractor,
) -> None:
    assert sig(extractor, "find the email from Bob") == "find:messages"
    assert sig(extractor, "email bob the message") == "send:message"


def test_adjective_is_not_a_verb(extractor: IntentExtractor) -> None:
    assert sig(extractor, "show my open orders") == "list:orders"
    assert sig(extractor, "show open orders") == "list:orders"


def test_a_verb_the_catalog_lacks_still_makes_a_clause(extractor: IntentExtractor) -> None:
    intent = extractor.extract("find my files and share them")
    assert intent.signature == "find:files>share:files"
    assert "share" in intent.verbs


def test_caller_synonyms_extend_the_lexicon() -> None:
    plain = IntentExtractor.for_catalog(_catalog())
    assert sig(plain, "scrap task 4") == ""
    extended = IntentExtractor.for_catalog(_catalog(), {"delete": ["scrap", "bin"]})
    assert sig(extended, "scrap task 4") == "delete:task"
    assert sig(extended, "bin the files") == "delete:files"


def test_bare_object_is_read(extractor: IntentExtractor) -> None:
    assert sig(extractor, "what orders do I have?") == "list:orders"
    assert sig(extractor, "my open orders") == "list:orders"
    assert sig(extractor, "tasks?") == "list:tasks"


def test_unknown_word_before_an_object_is_not_read_as_a_read(
    extractor: IntentExtractor,
) -> None:
    assert sig(extractor, "scrap task 4") == ""


@pytest.mark.parametrize("text", ["", "hello there", "what's the weather like", "42"])
def test_nothing_recognised_is_the_empty_intent(extractor: IntentExtractor, text: str) -> None:
    intent = extractor.extract(text)
    assert intent == Intent()
    assert not intent.complete


def test_verb_with_one_tool_family_gets_its_object(extractor: IntentExtractor) -> None:
    assert sig(extractor, "cancel it") == "cancel:order"


def test_deterministic_and_reusable(extractor: IntentExtractor) -> None:
    text = "find the PDFs and delete them, then list my tasks"
    assert extractor.extract(text) == extractor.extract(text)
    assert sig(extractor, text) == "find:files>delete:files>list:tasks"


def test_case_and_punctuation_do_not_matter(extractor: IntentExtractor) -> None:
    assert sig(extractor, "DELETE Task #4!") == sig(extractor, "delete task #4")


def test_intent_survives_the_store_round_trip(extractor: IntentExtractor) -> None:
    intent = extractor.extract("find the files but don't delete them")
    assert Intent.from_json(intent.to_json()) == intent


# --- phrase verbs, split verbs, quotes, pronouns --------------------------------------------


@pytest.fixture(scope="module")
def todo() -> IntentExtractor:
    tools = {
        "list_tasks": READ,
        "create_task": ToolContract(effect="write"),
        "complete_task": ToolContract(effect="write"),
        "reopen_task": ToolContract(effect="write"),
        "delete_task": ToolContract(effect="delete"),
        "enable_feature": ToolContract(effect="write"),
        "disable_feature": ToolContract(effect="write"),
        "find_messages": READ,
        "send_message": ToolContract(effect="send"),
        "find_files": READ,
        "delete_files": ToolContract(effect="delete"),
        "get_order": READ,
        "refund_order": ToolContract(effect="write"),
    }
    return IntentExtractor.for_catalog(
        catalog_of(plan_tool(name, {}, contract) for name, contract in tools.items())
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("mark task 4 as done", "complete:task"),
        ("mark task 4 done", "complete:task"),
        ("mark task 4 as complete", "complete:task"),
        ("please mark the task as finished", "complete:task"),
        ("tick off task 4", "complete:task"),
        ("tick task 4 off", "complete:task"),
        ("finish task 4", "complete:task"),
        ("mark task 4 as not done", "reopen:task"),
        ("mark task 4 as undone", "reopen:task"),
        ("turn on notifications", "enable:feature"),
        ("switch on notifications", "enable:feature"),
        ("switch notifications on", "enable:feature"),
        ("turn notifications off please", "disable:feature"),
        ("switch off notifications", "disable:feature"),
        ("get rid of task 4", "delete:task"),
        ("give a refund for order W14", "refund:order"),
        ("mark task 4 as done and delete task 9", "complete:task>delete:task"),
    ],
)
def test_phrase_and_split_verbs(todo: IntentExtractor, text: str, expected: str) -> None:
    assert sig(todo, text) == expected


def test_split_verbs_keep_negation(todo: IntentExtractor) -> None:
    assert sig(todo, "don't mark it done") == "!complete:task"
    assert todo.extract("don't mark task 4 as done").verbs == frozenset()
    assert sig(todo, "do not switch notifications off") == "!disable:feature"


def test_a_particle_that_is_a_preposition_is_no_split_verb(todo: IntentExtractor) -> None:
    assert sig(todo, "turn left on main street") == ""
    assert "enable" not in todo.extract("switch the task on monday to bob").verbs


def test_words_in_quotes_are_no_verbs(todo: IntentExtractor) -> None:
    assert sig(todo, 'add a task "send invoices"') == "create:task"
    assert sig(todo, "add a task 'delete old files'") == "create:task"


def test_a_pronoun_object_lets_the_next_verb_word_be_a_verb(todo: IntentExtractor) -> None:
    text = "list the PDFs, delete them and email the list to bob@x.org"
    assert sig(todo, text) == "find:files>delete:files>send:message"


def test_question_words_and_possessives_come_before_nouns(todo: IntentExtractor) -> None:
    assert sig(todo, "what mail did I get today?") == "find:messages"
    assert "send" not in todo.extract("find tasks and today's mail").verbs


def test_a_borrowed_object_is_one_the_verbs_tools_take(todo: IntentExtractor) -> None:
    assert sig(todo, "complete task 4 and enable notifications") == ("complete:task>enable:feature")


# --- Italian (`lang="it"`) -------------------------------------------------------------------


def it_sig(extractor: IntentExtractor, text: str) -> str:
    return extractor.extract(text, lang="it").signature


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cancella il task 4", "delete:task"),
        ("elimina il task 4", "delete:task"),
        ("rimuovi i compiti 4 e 5", "delete:task"),
        ("annulla l'ordine W1234567", "cancel:order"),
        ("cancella l'ordine W1234567", "cancel:order"),  # no delete tool for orders
        ("mostra i miei ordini", "list:orders"),
        ("elenca le attività", "list:tasks"),
        ("trova i documenti in /tmp", "find:files"),
        ("cerca le email di Bob", "find:messages"),
        ("fammi vedere i messaggi", "find:messages"),
        ("archivia il messaggio di Bob", "archive:message"),
        ("invia un messaggio a bob@x.org", "send:message"),
        ("manda la posta a bob@x.org", "send:message"),
        ("spedisci un'e-mail a bob@x.org", "send:message"),
        ("quali ordini ho?", "list:orders"),
        ("i miei ordini", "list:orders"),
    ],
)
def test_italian_single_clause(extractor: IntentExtractor, text: str, expected: str) -> None:
    assert it_sig(extractor, text) == expected


def test_italian_compound_find_and_delete(extractor: IntentExtractor) -> None:
    assert it_sig(extractor, "trova i file in /tmp e cancellali") == "find:files>delete:files"
    assert it_sig(extractor, "trova la posta di bob e cancella il task 4") == (
        "find:messages>delete:task"
    )
    assert it_sig(extractor, "trova e cancella i vecchi file") == "find:files>delete:files"
    assert it_sig(extractor, "elenca i compiti poi annulla l'ordine 5") == (
        "list:tasks>cancel:order"
    )


def test_italian_clitic_verb_ends_its_clause(extractor: IntentExtractor) -> None:
    assert it_sig(extractor, "trova la posta di bob, archiviala, elimina il task 4") == (
        "find:messages>archive:message>delete:task"
    )


def test_italian_negation_marks_the_clause(extractor: IntentExtractor) -> None:
    intent = extractor.extract("trova i file ma non cancellarli", lang="it")
    assert intent.signature == "find:files>!delete:files"
    assert extractor.extract("non annullare l'ordine", lang="it").clauses[0].negated
    assert extractor.extract("non mandare mai il messaggio", lang="it").clauses[0].negated
    intent = extractor.extract("non elencare i compiti e cancella il task 4", lang="it")
    assert [c.negated for c in intent.clauses] == [True, False]


@pytest.mark.parametrize(
    "text", ["le email di Bob", "l'email di Bob", "quali email ho?", "mostra le email"]
)
def test_an_italian_determiner_makes_email_a_noun(extractor: IntentExtractor, text: str) -> None:
    intent = extractor.extract(text, lang="it")
    assert intent.clauses and all(c.verb != "send" for c in intent.clauses)
    assert intent.clauses[0].object == "messages"


def test_english_reads_email_as_a_verb_but_italian_never(extractor: IntentExtractor) -> None:
    assert sig(extractor, "email bob the files").startswith("send:")
    assert "send" not in it_sig(extractor, "email di bob")


def test_italian_text_read_as_english_stays_incomplete(extractor: IntentExtractor) -> None:
    assert not extractor.extract("cancella il task 4").clauses
    assert it_sig(extractor, "cancella il task 4") == "delete:task"
    assert it_sig(extractor, "cancella il task 4") == it_sig(extractor, "cancella il task 4 ")
    assert extractor.extract("cancella il task 4", lang="it-IT").signature == "delete:task"


def test_italian_split_verb(extractor: IntentExtractor) -> None:
    catalog = catalog_of(
        plan_tool(n, {}, ToolContract(effect="write")) for n in ("complete_task", "reopen_task")
    )
    it = IntentExtractor.for_catalog(catalog)
    assert it_sig(it, "segna il task 4 come fatto") == "complete:task"
    assert it_sig(it, "segna il task 4 come non fatto") == "reopen:task"
    assert it_sig(it, "completa il compito 4 e riapri il compito 9") == (
        "complete:task>reopen:task"
    )


def test_a_statement_about_an_object_is_not_read_as_a_question_about_it(
    extractor: IntentExtractor,
) -> None:
    # "task 4 is done" asks for a change the lexicon does not know: no intent (exact reuse
    # only), never a read of the task; "is task 4 done?" asks, and reads it.
    assert sig(extractor, "order 4 is done") == ""
    assert sig(extractor, "the order is cancelled already") == ""
    assert sig(extractor, "is order 4 done?") != ""
