"""Protobuf request bodies (layer L4, apiserver): envelope + hand-written field tables.

| I want to… | Touch | Test at |
|---|---|---|
| decode another kind kubectl sends as protobuf | `schema.py` (`_SPECS`, `KINDS`) | `tests/apiserver/protobuf/` |

Data flow: HTTP body (`application/vnd.kubernetes.protobuf`) → `decode_protobuf` → JSON dict →
the same create/update/delete path as a JSON body.
"""

from apiserver.protobuf.decode import MAGIC, MEDIA_TYPE, UnsupportedKindError, decode_message, decode_protobuf
from apiserver.protobuf.encode import encode_message, encode_protobuf
from apiserver.protobuf.wire import ProtobufError

__all__ = [
    "MAGIC",
    "MEDIA_TYPE",
    "ProtobufError",
    "UnsupportedKindError",
    "decode_message",
    "decode_protobuf",
    "encode_message",
    "encode_protobuf",
]
