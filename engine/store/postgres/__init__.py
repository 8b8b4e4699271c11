"""The PostgreSQL store driver: a schema per agent with pgvector and BM25 postings."""
