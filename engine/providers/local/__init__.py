"""The local embedding provider: a GGUF model run by llama-cpp-python, and installing one."""
