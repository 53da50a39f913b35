"""An object's identity at create: the uid it is stamped with (a version-4 UUID drawn from the
core's injected Random, in the same 8-4-4-4-12 form `uuid.UUID(int=..., version=4)` writes) and
the names it is refused under."""

import random
import uuid

import pytest

from apiserver.core import uuid4_string
from minik3s.api.errors import InvalidError
from minik3s.api.resources import CONFIGMAPS


def test_same_string_as_the_uuid_module():
    rng = random.Random(7)
    for bits in [0, (1 << 128) - 1, *(rng.getrandbits(128) for _ in range(2000))]:
        assert uuid4_string(bits) == str(uuid.UUID(int=bits, version=4))


async def test_created_objects_get_distinct_v4_uids(real_api):
    uids = []
    for i in range(20):
        obj = await real_api.create(CONFIGMAPS, {"metadata": {"name": f"cm-{i}"}}, "default")
        u = uuid.UUID(obj["metadata"]["uid"])
        assert u.version == 4 and u.variant == uuid.RFC_4122
        assert str(u) == obj["metadata"]["uid"]
        uids.append(u)
    assert len(set(uids)) == 20


async def test_a_name_ending_in_a_newline_is_refused_and_nothing_is_stored(real_api):
    with pytest.raises(InvalidError) as e:
        await real_api.create(CONFIGMAPS, {"metadata": {"name": "cm-1\n"}}, "default")
    assert [c["field"] for c in e.value.causes] == ["metadata.name"]
    assert (await real_api.list(CONFIGMAPS, "default"))["items"] == []
