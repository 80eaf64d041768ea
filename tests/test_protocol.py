"""The request and reply shapes between the client and the service are versioned by
``memcli.PROTOCOL``: a client and a service that differ in it do not talk (the client
restarts an older service). Within one ``__version__`` only ``PROTOCOL`` tells an old
running service from new code, so a change of shape must raise it: this test fails when
the shapes change and ``PROTOCOL`` does not."""

from __future__ import annotations

import hashlib
import inspect
import json
import typing

from pydantic import BaseModel, create_model

import memcli
import memcli.schema as schema
from memcli.library.api import arguments
from memcli.library.library import Memcli
from memcli.library.verbs import VERBS

# PROTOCOL and the digest of the shapes it was last raised for: change both together
RECORDED = (7, "c663406a657611e6")


def _fields(model: type[BaseModel]) -> dict[str, list[object]]:
    """A model's fields: each one's type (as Python writes it) and whether it is required,
    what a reader of the other side fails on (a missing field it requires, a value of
    another type, an argument it does not take)."""
    return {name: [str(field.annotation), field.is_required()] for name, field in sorted(model.model_fields.items())}


def shapes_digest(models: dict[str, type[BaseModel]] | None = None) -> str:
    """A digest of ``models`` (None: every reply model in ``memcli.schema``, every verb's
    arguments and the model each verb returns)."""
    if models is None:
        models = {
            name: model
            for name, model in vars(schema).items()
            if inspect.isclass(model) and issubclass(model, BaseModel) and model.__module__ == schema.__name__
        }
        models.update({f"verb {verb}": arguments(verb) for verb in VERBS})
        returns = {
            verb: str(typing.get_type_hints(getattr(Memcli, VERBS[verb].method)).get("return")) for verb in VERBS
        }
    else:
        returns = {}
    shapes = {name: _fields(model) for name, model in models.items()}
    blob = json.dumps({"shapes": shapes, "returns": returns}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def test_a_change_of_the_shapes_raises_the_protocol():
    protocol, digest = RECORDED
    now = shapes_digest()
    assert memcli.PROTOCOL == protocol, (
        f"PROTOCOL is {memcli.PROTOCOL}: record it with the shapes' digest in RECORDED ({memcli.PROTOCOL}, {now!r})"
    )
    assert now == digest, (
        f"the request or reply shapes changed (digest {now}, recorded {digest} for PROTOCOL {protocol}): "
        f"raise memcli.PROTOCOL, say what changed in its docstring, and record the pair here"
    )


def test_the_digest_sees_a_new_field_a_field_made_optional_and_a_new_type():
    old = create_model("ChatState", session_id=(str, ...))
    added = create_model("ChatState", session_id=(str, ...), said_ids=(list[str], []))
    optional = create_model("ChatState", session_id=(str, ""))
    typed = create_model("ChatState", session_id=(int, ...))
    digests = {shapes_digest({"ChatState": model}) for model in (old, added, optional, typed)}
    assert len(digests) == 4
