"""Adapters that hand memext to agent frameworks (optional extras).

- :mod:`memext.engine.faces.adapters.langchain` (``pip install 'memext[langchain]'``):
  ``MemextRetriever`` and the memory tools as LangChain tools.
- :mod:`memext.engine.faces.adapters.llamaindex` (``pip install 'memext[llamaindex]'``):
  ``MemextLlamaRetriever``.

Import the submodule you need; each says which extra is missing when its
framework is not installed. Nothing here is imported by the engine itself.
"""
