"""The store: memories in Chroma (``store.MemoryStore``), the sidecar database beside it
(``sidecar``: history, consolidation progress, the graph tables ``graph``, the recall index
``recall_index``/``index``, ``hnsw``), the zeroing of free space in Chroma's database
(``sqlite_pages``), the journal of writes not yet stored (``journal``) and
the space reserve (``space``). May import the models, text and the leaves."""
