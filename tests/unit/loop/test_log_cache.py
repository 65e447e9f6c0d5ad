"""The engine's log cache: a turn reads only the events appended since the last one it saw,
and still sees what another worker appended in between."""

from __future__ import annotations

from pathlib import Path

from keel.events.fold import fold
from keel.events.model import BotMessage, Event, UserMessage
from keel.loop.log_cache import LogCache
from keel.stores.factory import open_store
from keel.stores.port import EventStore, StoredEvent
from keel.testing import ConversationHarness, ScriptedModel
from keel.testing.harness import load_definition

GREETER = Path(__file__).resolve().parents[2] / "conversations" / "agents" / "greeter"


class CountingStore:
    """A real store, counting how many events each read returned."""

    def __init__(self, inner: EventStore) -> None:
        self.inner = inner
        self.read_sizes: list[int] = []

    async def read(self, conversation_id: str, after_seq: int = 0) -> list[StoredEvent]:
        found = await self.inner.read(conversation_id, after_seq=after_seq)
        self.read_sizes.append(len(found))
        return found


def message(text: str) -> Event:
    return UserMessage(text=text, message_id=text)


async def test_a_known_log_is_extended_with_only_the_new_events(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'log.db'}")
    counting = CountingStore(store)
    cache = LogCache(counting)  # type: ignore[arg-type]
    await store.append("c", 0, [message("a"), message("b")])
    events, state = await cache.load("c")
    cache.keep("c", events, state)
    await store.append("c", 2, [message("c")])  # another worker's turn
    events, state = await cache.load("c")
    assert counting.read_sizes == [2, 1]
    assert [e.text for e in events if isinstance(e, UserMessage)] == ["a", "b", "c"]
    assert state == fold(s.event for s in await store.read("c"))
    await store.close()


async def test_forgetting_or_overflowing_reads_the_whole_log_again(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'log.db'}")
    counting = CountingStore(store)
    cache = LogCache(counting, capacity=1)  # type: ignore[arg-type]
    for conversation in ("c", "d"):
        await store.append(conversation, 0, [message("x")])
        cache.keep(conversation, *await cache.load(conversation))
    await cache.load("c")  # "c" was pushed out by "d"
    cache.forget("d")
    await cache.load("d")
    assert counting.read_sizes == [1, 1, 1, 1]
    await store.close()


async def test_two_workers_on_one_store_each_see_the_others_turns(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'shared.db'}")
    definition = load_definition(GREETER)
    replies = [f"Reply {n}." for n in range(4)]
    one = ConversationHarness(definition, ScriptedModel(replies[0::2]), store=store)
    two = ConversationHarness(definition, ScriptedModel(replies[1::2]), store=store)
    for n, worker in enumerate((one, two, one, two)):
        result = await worker.send(f"message {n}")
        assert [e.text for e in result.events if isinstance(e, BotMessage)][-1] == replies[n]
    stored = [s.event for s in await store.read("conversation-1")]
    assert result.state == fold(stored)
    assert [e.text for e in stored if isinstance(e, UserMessage)] == [
        f"message {n}" for n in range(4)
    ]
    await store.close()
