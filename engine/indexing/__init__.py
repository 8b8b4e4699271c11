"""Bringing an index up to date with the memory files: sync, change checks, repair."""
