"""Keel's command line: thin commands over the library."""
