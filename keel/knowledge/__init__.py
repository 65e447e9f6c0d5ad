"""Knowledge: reference documents indexed for `search_knowledge` (spec §7.5).

* `keel.knowledge.sources`: which files (`references/**/*.md` of the project and skills);
* `keel.knowledge.chunking`: headings-aware chunks (`references.chunking`);
* `keel.knowledge.bm25`, `keel.knowledge.index`: BM25, cosine and their fusion (pure);
* `keel.knowledge.build`: fingerprints and incremental (re)builds;
* `keel.knowledge.store`, `keel.knowledge.sql_store`: where built indexes live;
* `keel.knowledge.service`: `ProjectKnowledge`, what the turn loop calls.

Importing this package imports nothing heavy; numpy and the embedder load with the
modules that need them. See docs/knowledge.md.
"""
