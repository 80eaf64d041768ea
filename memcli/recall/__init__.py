"""Recall and answers: ranked retrieval (``retrieval``), the answer to a question
(``answers``, ``assistant``), retention and reinforcement (``forgetting``, MemoryBank §2.3)
and the changes a recall, a rating, a pin or a deletion makes to a memory (``changes``).
May import the store, the models, text and the leaves."""
