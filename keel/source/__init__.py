"""Where authored text goes wrong: located diagnostics, YAML with line numbers, a collector.

The bottom layer of Keel: `diagnostics` (the `Diagnostic` value), `yaml` (PyYAML's safe
loader with the line of every key and item; errors become diagnostics), `reporter` (one
file's diagnostics and typed readers that report and fall back). It imports nothing else
from Keel, so every package that reads a project file can use it.
"""
