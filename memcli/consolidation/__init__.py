"""Consolidation: each day into event summaries and a portrait (MemoryBank), each session
into the running memory (recursive summarization), facts with ADD/UPDATE/DELETE/NOOP (Mem0),
and graph memory (``graph_memory``, Mem0g); what a model writes is bounded
(``model_output``) and grounded in its sources (``grounding``). May import the store, the
models, text and the leaves."""
