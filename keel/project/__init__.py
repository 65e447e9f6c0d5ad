"""Reading an agent project from disk into an immutable AgentDefinition."""
