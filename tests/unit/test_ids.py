"""`UuidSource` makes UUID4 hex ids, as `uuid.uuid4().hex` does."""

import uuid

from keel.ids import UuidSource


def test_ids_are_distinct_uuid4_hex() -> None:
    source = UuidSource()
    made = [source.new_id() for _ in range(2_000)]
    assert len(set(made)) == len(made)
    for made_id in made:
        parsed = uuid.UUID(hex=made_id)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert parsed.hex == made_id  # 32 lowercase hex digits, no dashes
