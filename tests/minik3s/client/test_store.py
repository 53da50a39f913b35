"""The informer's indexed store (client-go's thread-safe store with indexers): lookups by index
stay exact through adds, updates that change or keep an object's index values, removals, and
an index registered after objects arrived or registered again under the same name."""

from __future__ import annotations

from typing import Any

from minik3s.client.store import Store


def pod(name: str, node: str = "", ns: str = "default", claims: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns},
            "spec": {"nodeName": node, "volumes": [{"persistentVolumeClaim": {"claimName": c}} for c in claims]}}


def by_node(o: dict[str, Any]) -> list[str]:
    n = o["spec"].get("nodeName")
    return [n] if n else []


def by_claim(o: dict[str, Any]) -> list[str]:
    return [f'{o["metadata"]["namespace"]}/{v["persistentVolumeClaim"]["claimName"]}' for v in o["spec"]["volumes"]]


def names(objs: list[dict[str, Any]]) -> set[str]:
    return {o["metadata"]["name"] for o in objs}


def test_updates_move_objects_between_index_values_and_removals_leave_no_trace() -> None:
    s = Store()
    s.add_index("node", by_node)
    s.add_index("claim", by_claim)
    s.put("default/a", pod("a", claims=("x", "y")))
    s.put("default/b", pod("b", "n1", claims=("x",)))
    assert names(s.by_index("node", "n1")) == {"b"}
    assert names(s.by_index("claim", "default/x")) == {"a", "b"}
    s.put("default/a", pod("a", "n1", claims=("x", "y")))  # bound: node changes, claims do not
    assert names(s.by_index("node", "n1")) == {"a", "b"}
    assert names(s.by_index("claim", "default/y")) == {"a"}
    s.put("default/a", pod("a", "n2", claims=("y",)))  # both change
    assert names(s.by_index("node", "n1")) == {"b"}
    assert names(s.by_index("node", "n2")) == {"a"}
    assert names(s.by_index("claim", "default/x")) == {"b"}
    old = s.remove("default/b")
    assert old is not None and old["metadata"]["name"] == "b"
    assert s.by_index("node", "n1") == [] and s.by_index("claim", "default/x") == []
    assert s._indices == {"node": {"n2": {"default/a"}}, "claim": {"default/y": {"default/a"}}}
    assert s.remove("default/b") is None
    s.put("default/b", pod("b", "n2"))  # added again after removal
    assert names(s.by_index("node", "n2")) == {"a", "b"}


def test_an_index_added_later_or_replaced_covers_the_current_objects() -> None:
    s = Store()
    s.put("default/a", pod("a", "n1"))
    s.put("default/b", pod("b", "n2", claims=("x",)))
    s.add_index("claim", by_claim)
    assert names(s.by_index("claim", "default/x")) == {"b"}
    s.add_index("node", by_node)
    assert names(s.by_index("node", "n1")) == {"a"}
    s.add_index("node", lambda o: [o["metadata"]["namespace"]])  # same name, other function
    assert names(s.by_index("node", "default")) == {"a", "b"}
    assert s.by_index("node", "n1") == []
    s.put("default/a", pod("a", "n3", ns="default", claims=("x",)))
    assert names(s.by_index("claim", "default/x")) == {"a", "b"}
    assert names(s.by_index("node", "default")) == {"a", "b"}
    assert s.version == 3


def test_adding_or_replacing_an_index_computes_only_that_index() -> None:
    calls: list[str] = []

    def counted(name: str, fn: Any) -> Any:
        def wrapped(o: dict[str, Any]) -> list[str]:
            calls.append(name)
            return list(fn(o))
        return wrapped

    s = Store()
    s.add_index("claim", counted("claim", by_claim))
    s.add_index("node", counted("node", by_node))
    s.put("default/a", pod("a", "n1", claims=("x",)))
    s.put("default/b", pod("b", "n2", claims=("y",)))
    calls.clear()
    s.add_index("gang", counted("gang", lambda o: []))
    s.add_index("claim", counted("claim2", lambda o: [o["metadata"]["name"]]))  # replaced, not the last
    assert sorted(calls) == ["claim2", "claim2", "gang", "gang"]
    assert names(s.by_index("claim", "a")) == {"a"} and s.by_index("claim", "default/x") == []
    s.put("default/a", pod("a", "n3", claims=("x",)))  # each index keeps its own values
    assert names(s.by_index("node", "n3")) == {"a"} and s.by_index("node", "n1") == []
    assert names(s.by_index("claim", "a")) == {"a"}
    s.remove("default/b")
    assert s._indices == {"claim": {"a": {"default/a"}}, "node": {"n3": {"default/a"}}, "gang": {}}
