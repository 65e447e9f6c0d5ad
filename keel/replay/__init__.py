"""Re-running stored conversations: read a log, replay it through an agent, diff the events."""
