"""Embeddings: the `Embedder` port, the local all-MiniLM-L6-v2 in numpy, the OpenAI adapter.

Empty on purpose: importing `keel.embeddings.port` must not load the local model's modules.
"""
