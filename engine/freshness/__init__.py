"""Keeping indexes fresh in the background: keepers, their supervisor, file watching."""
