"""The faces that live inside the engine because they are thin: CLI commands, MCP server, adapters."""
