"""Memory files: where they live, which count, reading, writing, dating and chunking them."""
