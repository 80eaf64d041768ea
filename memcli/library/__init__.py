"""The verbs and the library: the verb table (``verbs``, with the client's typed ``views``),
``api.run`` that validates a request, ``library.Memcli`` with one method per verb, and the
``engine`` that does their work, with chat, evaluation, ``doctor`` and ``versions``. May
import recall, consolidation, formats, the store, the models, text and the leaves."""
