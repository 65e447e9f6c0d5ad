"""Readable assertion failures inside the shipped contract checks."""

import pytest

pytest.register_assert_rewrite("keel.stores.conformance")
