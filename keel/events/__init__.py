"""The event log vocabulary: the source of truth of every conversation.

* `keel.events.model`: one frozen dataclass per event kind, the `Event` union and the
  explicit `EVENT_TYPES` registry (wire name -> class);
* `keel.events.codec`: versioned JSON encoding (`encode_event`, `decode_event`), JSONL logs;
* `keel.events.fold`: `ConversationState` and the pure, incremental `fold`.

Pure core: nothing here does IO, reads the clock or draws random numbers.
"""
