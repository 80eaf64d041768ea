"""The models: the chat model (``llm``: a local GGUF through llama.cpp; ``llm_server``: an
OpenAI-compatible server), the embedder (``embedding``, ``embedding_server``), the prompts
they are given (``prompts``) and the batches an import embeds (``batching``). May import
the leaves only."""
