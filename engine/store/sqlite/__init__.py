"""The SQLite store driver: one file per agent with FTS5, sqlite-vec and a vector sidecar."""
