"""``python -m llama_cpp.server`` with mean pooling of embeddings for a model whose GGUF
sets no pooling type (see ``fakes.llama_server``): the same server, its arguments as
they are; only ``llama_cpp.Llama``'s ``pooling_type`` defaults to mean."""

from __future__ import annotations

import functools
import runpy

import llama_cpp

_init = llama_cpp.Llama.__init__


@functools.wraps(_init)
def _pooled(self: llama_cpp.Llama, *args: object, **kwargs: object) -> None:
    kwargs.setdefault("pooling_type", llama_cpp.LLAMA_POOLING_TYPE_MEAN)
    _init(self, *args, **kwargs)  # type: ignore[arg-type]


llama_cpp.Llama.__init__ = _pooled  # type: ignore[method-assign]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
