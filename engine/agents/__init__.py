"""What agents use: the memory tools, where tool calls find an index, flush, session memory."""
