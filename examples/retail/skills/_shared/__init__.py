"""Helpers shared by the retail skills' tools and hooks (not a skill: the loader skips `_`
folders). Pure functions over the database dict that `retaildb.current()` returns."""
