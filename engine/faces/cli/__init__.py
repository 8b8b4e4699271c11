"""The engine's ``memext`` commands (index, search, get, status, agents, config, model)."""
