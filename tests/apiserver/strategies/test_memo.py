"""The memo mechanism shared by spec validation and spec decoding."""

from __future__ import annotations

from apiserver.strategies.memo import SecondSightLRU, exact_json


class Str(str):
    pass


def test_exact_json_tells_values_apart_and_refuses_what_is_not_plain_json() -> None:
    assert len({exact_json(v, 100) for v in (1, 1.0, True)}) == 3
    assert exact_json({"a": 1, "b": 2}, 100) != exact_json({"b": 2, "a": 1}, 100)
    assert exact_json({"a": Str("x")}, 100) is None
    assert exact_json("x" * 200, 100) is None and exact_json("x" * 50, 100) is not None


def test_second_sight_lru_admits_on_the_second_sighting_and_stays_bounded() -> None:
    lru: SecondSightLRU[str, int] = SecondSightLRU(3)
    assert lru.first_sighting("a") is True
    assert lru.first_sighting("a") is False  # seen before: the caller stores it now
    lru.put("a", 1)
    assert lru.get("a") == 1 and lru.get("b") is None
    for k in "bcde":
        lru.first_sighting(k)
        lru.put(k, ord(k))
    assert len(lru) == 3 and lru.get("a") is None  # least recently used out first
    assert len(lru._seen) <= 3
    lru.get("c")  # a hit refreshes: c outlives d
    lru.put("f", 6)
    assert lru.get("c") == ord("c") and lru.get("d") is None
