"""Plans and the plan cache (plan-cache spec Part 3): format, validator, cache layers, executor."""
