"""Upstream's strategic-merge-patch tables, application side, run through our `apply_strategic_merge_patch`.

Source: k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go (kubernetes v1.33 line; the stored
copy read is the mainline file, `deleteMatchingEntries` semantics) and, for JSON merge patch,
k8s.io/apimachinery/pkg/util/jsonmergepatch/patch_test.go.

Upstream checks every case twice: it *creates* the two-way / three-way patch from the documents
(client side: kubectl) and then *applies* it (server side). minik3s only applies patches, so each
case here applies upstream's expected patch and compares with upstream's expected object:
- two-way: `original` + `twoWay` -> `twoWayResult` (or `modified` when there is none);
- three-way: `current` + `threeWay` -> `result`.

The schema is upstream's test type `MergeItem` (patch_test.go), written as our `PatchMeta`:
`mergingList`/`mergeItemPtr` merge on `name`, `mergingIntList` merges as a set, `nonMerging*` are
replaced, `replacingItem` has `patchStrategy:"replace"`, `retainKeysMap` has `retainKeys`,
`retainKeysMergingList` has `merge,retainKeys`.

Cases given upstream as YAML structs (`createStrategicMergePatchTestCaseData`,
`customStrategicMergePatchTestCaseData`) are compared as upstream compares them: original, patch
and expected are first put through `sortMergeListsByName` (merge lists sorted by merge key,
merging scalar lists de-duplicated and sorted). The raw cases are compared as written (order
matters). Values are written in YAML flow style; `name: 1` is a number as in upstream's YAML.

Not ported (no observable meaning in minik3s, which never creates patches):
- patch *creation* assertions (`testPatchCreation`), conflict detection of
  `CreateThreeWayMergePatch`, TestSortMergeLists (a test helper), TestUnknownField "diff"
  (fails while creating the patch), the `bad struct` / `nil struct` arguments (Go types);
- the two cases only present in a fork of the file ("de-duplicate field in merging list",
  "delete duplicate field in merging list") and its "de-duplicate entries in a merging list".
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from typing import Any

import pytest
import yaml

from apiserver.core import ApiCore
from apiserver.patch import PatchError
from apiserver.patch.merge_patch import apply_merge_patch
from apiserver.patch.strategic_merge import PatchMeta, apply_strategic_merge_patch
from minik3s.api import errors
from minik3s.api.helpers.pods import condition_status_patch
from minik3s.api.options import WriteOptions
from minik3s.api.resources import PODS

# --- upstream's MergeItem schema ---------------------------------------------------------------


def _merge_item_schema() -> PatchMeta:
    item = PatchMeta(struct=True)

    def keyed(strategy: str = "merge") -> PatchMeta:
        return PatchMeta(item=item, strategy=strategy, merge_key="name", list_type="map", list_keys=("name",))

    retain_keys_item = PatchMeta(
        struct=True,
        strategy="retainKeys",
        fields={
            "simpleMap": PatchMeta(),
            "mergingIntList": PatchMeta(strategy="merge", list_type="set"),
            "mergingList": keyed(),
            "nonMergingList": PatchMeta(item=item),
        },
    )
    item.fields = {
        "mergingList": keyed(),
        "nonMergingList": PatchMeta(item=item),
        "mergingIntList": PatchMeta(strategy="merge", list_type="set"),
        "nonMergingIntList": PatchMeta(),
        "mergeItemPtr": keyed(),
        "simpleMap": PatchMeta(),
        "replacingItem": PatchMeta(strategy="replace"),
        "retainKeysMap": retain_keys_item,
        "retainKeysMergingList": keyed("merge,retainKeys"),
    }
    return item


MERGE_ITEM = _merge_item_schema()


def y(text: str | None) -> Any:
    """A YAML document as upstream's test decodes it (absent or empty -> `{}`)."""
    if text is None:
        return {}
    loaded = yaml.safe_load(textwrap.dedent(text))
    return {} if loaded is None else loaded


def _go_string(v: Any) -> str:
    """Go's `%v` of a decoded scalar (the sort key upstream uses)."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def sort_merge_lists(value: Any, meta: PatchMeta) -> Any:
    """Upstream's test helper `sortMergeListsByName`: merge lists sorted by merge key (recursively),
    merging scalar lists de-duplicated and sorted, `$retainKeys` and `$deleteFromPrimitiveList`
    values sorted; `$setElementOrder` lists and non-merging lists untouched."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for k, v in value.items():
        if k == "$retainKeys" or k.startswith("$deleteFromPrimitiveList/"):
            v = sorted(v, key=_go_string)
        elif k.startswith("$setElementOrder/") or k == "$patch":
            pass
        elif isinstance(v, dict):
            v = sort_merge_lists(v, meta.child(k))
        elif isinstance(v, list) and meta.child(k).merges and v:
            child = meta.child(k)
            if not isinstance(v[0], dict):
                deduped: list[Any] = []
                for x in v:
                    if x not in deduped:
                        deduped.append(x)
                v = sorted(deduped, key=_go_string)
            else:
                v = sorted(
                    (sort_merge_lists(e, child.element()) for e in v),
                    key=lambda e: _go_string(e.get(child.merge_key)),
                )
        out[k] = v
    return out


def smp(original: Any, patch: Any) -> Any:
    return apply_strategic_merge_patch(original, patch, MERGE_ITEM)


@dataclass(frozen=True)
class Case:
    name: str
    original: str | None = None
    two_way: str | None = None
    modified: str | None = None
    two_way_result: str | None = None
    current: str | None = None
    three_way: str | None = None
    result: str | None = None
    error: str | None = None


def two_way(cases: list[Case]) -> list[Any]:
    return [pytest.param(c, id=c.name) for c in cases]


def three_way(cases: list[Case]) -> list[Any]:
    return [pytest.param(c, id=c.name) for c in cases if c.result is not None]


# --- customStrategicMergePatchTestCaseData (YAML structs, two-way only) -------------------------

CUSTOM = [
    Case("unique scalars when merging lists",
         original="mergingIntList: [1, 2]", two_way="mergingIntList: [2, 3]",
         modified="mergingIntList: [1, 2, 3]"),
    Case("delete map from nested map",
         original="simpleMap: {key1: 1, key2: 1}", two_way="simpleMap: {$patch: delete}",
         modified="simpleMap: {}"),
    Case("delete all items from merging list",
         original="mergingList: [{name: 1}, {name: 2}]", two_way="mergingList: [{$patch: replace}]",
         modified="mergingList: []"),
    Case("merge empty merging lists",
         original="mergingList: []", two_way="mergingList: []", modified="mergingList: []"),
    Case("delete all keys from map",
         original="{name: 1, value: 1}", two_way="{$patch: replace}", modified="{}"),
    Case("add key and delete all keys from map",
         original="{name: 1, value: 1}", two_way="{other: a, $patch: replace}", modified="{other: a}"),
    Case("delete all duplicate entries in a merging list",
         original="mergingList: [{name: 1}, {name: 1}, {name: 2, value: a}, {name: 3}, {name: 3}]",
         two_way="mergingList: [{name: 1, $patch: delete}, {name: 3, $patch: delete}]",
         modified="mergingList: [{name: 2, value: a}]"),
    Case("retainKeys map can add a field when no retainKeys directive present",
         original="retainKeysMap: {name: foo}", two_way="retainKeysMap: {value: bar}",
         modified="retainKeysMap: {name: foo, value: bar}"),
    Case("retainKeys map can change a field when no retainKeys directive present",
         original="retainKeysMap: {name: foo, value: a}", two_way="retainKeysMap: {value: b}",
         modified="retainKeysMap: {name: foo, value: b}"),
    Case("retainKeys map can delete a field when no retainKeys directive present",
         original="retainKeysMap: {name: foo, value: a}", two_way="retainKeysMap: {value: null}",
         modified="retainKeysMap: {name: foo}"),
    Case("retainKeys map merge an empty map",
         original="retainKeysMap: {name: foo, value: a}", two_way="retainKeysMap: {}",
         modified="retainKeysMap: {name: foo, value: a}"),
    Case("retainKeys list can add a field when no retainKeys directive present",
         original="retainKeysMergingList: [{name: bar}, {name: foo}]",
         two_way="retainKeysMergingList: [{name: foo, value: a}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]"),
    Case("retainKeys list can change a field when no retainKeys directive present",
         original="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
         two_way="retainKeysMergingList: [{name: foo, value: b}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo, value: b}]"),
    Case("retainKeys list can delete a field when no retainKeys directive present",
         original="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
         two_way="retainKeysMergingList: [{name: foo, value: null}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo}]"),
    Case("preserve the order from the patch in a merging list",
         original="mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]",
         two_way="mergingList: [{name: 3, value: c}, {name: 1, value: a}, {name: 2, other: x}]",
         modified="mergingList: [{name: 3, value: c}, {name: 1, value: a}, {name: 2, value: b, other: x}]"),
    Case("preserve the order from the patch in a merging list 2",
         original="mergingList: [{name: 1}, {name: 2, value: b}, {name: 3}]",
         two_way="mergingList: [{name: 3, value: c}, {name: 1, value: a}]",
         modified="mergingList: [{name: 2, value: b}, {name: 3, value: c}, {name: 1, value: a}]"),
    Case("preserve the order from the patch in a merging int list",
         original="mergingIntList: [1, 2, 3]", two_way="mergingIntList: [3, 1, 2]",
         modified="mergingIntList: [3, 1, 2]"),
    Case("preserve the order from the patch in a merging int list (2)",
         original="mergingIntList: [1, 2, 3]", two_way="mergingIntList: [3, 1]",
         modified="mergingIntList: [2, 3, 1]"),
]

# --- customStrategicMergePatchRawTestCases (raw, two-way only, some errors) ---------------------

CUSTOM_RAW = [
    Case("$setElementOrder contains item that is not present in the list to be merged",
         original="mergingList: [{name: 1}, {name: 3}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 3}, {name: 2}, {name: 1}]
           mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]
         """,
         modified="mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]"),
    Case("$setElementOrder contains item that is not present in the int list to be merged",
         original="mergingIntList: [1, 3]",
         two_way="$setElementOrder/mergingIntList: [3, 2, 1]",
         modified="mergingIntList: [3, 1]"),
    Case("should check if order in $setElementOrder and patch list match",
         original="mergingList: [{name: 1}, {name: 3}, {name: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}]
           mergingList: [{name: 3, value: 3}, {name: 1, value: 1}]
         """,
         error="doesn't match"),
    Case("$setElementOrder contains item that is not present in the int list to be merged (2)",
         original="mergingIntList: [1, 3, 2]",
         two_way="""
           $setElementOrder/mergingIntList: [1, 2, 3]
           mergingIntList: [3, 1]
         """,
         error="doesn't match"),
    Case("missing merge key should error out",
         original="mergingList: [{name: 1, value: a}]",
         two_way="mergingList: [{value: b}]",
         error="does not contain declared merge key"),
]

# --- createStrategicMergePatchTestCaseData (YAML structs, two-way and three-way) ----------------

CREATE = [
    Case("nil original",
         two_way="{name: 1, value: 1}", modified="{name: 1, value: 1}",
         current="{name: 1, other: a}", three_way="{value: 1}", result="{name: 1, value: 1, other: a}"),
    Case("nil patch",
         original="{name: 1}", two_way="{}", modified="{name: 1}",
         current="{name: 1}", three_way="{}", result="{name: 1}"),
    Case("add field to map",
         original="{name: 1}", two_way="{value: 1}", modified="{name: 1, value: 1}",
         current="{name: 1, other: a}", three_way="{value: 1}", result="{name: 1, value: 1, other: a}"),
    Case("add field to map with conflict",
         original="{name: 1}", two_way="{value: 1}", modified="{name: 1, value: 1}",
         current="{name: a, other: a}", three_way="{name: 1, value: 1}",
         result="{name: 1, value: 1, other: a}"),
    Case("add field and delete field from map",
         original="{name: 1}", two_way="{name: null, value: 1}", modified="{value: 1}",
         current="{name: 1, other: a}", three_way="{name: null, value: 1}", result="{value: 1, other: a}"),
    Case("add field and delete field from map with conflict",
         original="{name: 1}", two_way="{name: null, value: 1}", modified="{value: 1}",
         current="{name: a, other: a}", three_way="{name: null, value: 1}", result="{value: 1, other: a}"),
    Case("delete field from nested map",
         original="simpleMap: {key1: 1, key2: 1}", two_way="simpleMap: {key2: null}",
         modified="simpleMap: {key1: 1}",
         current="simpleMap: {key1: 1, key2: 1, other: a}", three_way="simpleMap: {key2: null}",
         result="simpleMap: {key1: 1, other: a}"),
    Case("delete field from nested map with conflict",
         original="simpleMap: {key1: 1, key2: 1}", two_way="simpleMap: {key2: null}",
         modified="simpleMap: {key1: 1}",
         current="simpleMap: {key1: a, key2: 1, other: a}", three_way="simpleMap: {key1: 1, key2: null}",
         result="simpleMap: {key1: 1, other: a}"),
    Case("delete all fields from map",
         original="{name: 1, value: 1}", two_way="{name: null, value: null}", modified="{}",
         current="{name: 1, value: 1, other: a}", three_way="{name: null, value: null}",
         result="{other: a}"),
    Case("delete all fields from map with conflict",
         original="{name: 1, value: 1}", two_way="{name: null, value: null}", modified="{}",
         current="{name: 1, value: a, other: a}", three_way="{name: null, value: null}",
         result="{other: a}"),
    Case("add field and delete all fields from map",
         original="{name: 1, value: 1}", two_way="{name: null, value: null, other: a}", modified="{other: a}",
         current="{name: 1, value: 1, other: a}", three_way="{name: null, value: null}",
         result="{other: a}"),
    Case("add field and delete all fields from map with conflict",
         original="{name: 1, value: 1}", two_way="{name: null, value: null, other: a}", modified="{other: a}",
         current="{name: 1, value: 1, other: b}", three_way="{name: null, value: null, other: a}",
         result="{other: a}"),
    Case("replace list of scalars",
         original="nonMergingIntList: [1, 2]", two_way="nonMergingIntList: [2, 3]",
         modified="nonMergingIntList: [2, 3]",
         current="nonMergingIntList: [1, 2]", three_way="nonMergingIntList: [2, 3]",
         result="nonMergingIntList: [2, 3]"),
    Case("replace list of scalars with conflict",
         original="nonMergingIntList: [1, 2]", two_way="nonMergingIntList: [2, 3]",
         modified="nonMergingIntList: [2, 3]",
         current="nonMergingIntList: [1, 4]", three_way="nonMergingIntList: [2, 3]",
         result="nonMergingIntList: [2, 3]"),
    Case("delete all maps from merging list",
         original="mergingList: [{name: 1}, {name: 2}]",
         two_way="mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]",
         modified="mergingList: []",
         current="mergingList: [{name: 1}, {name: 2}]",
         three_way="mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]",
         result="mergingList: []"),
    Case("delete all maps from merging list with conflict",
         original="mergingList: [{name: 1}, {name: 2}]",
         two_way="mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]",
         modified="mergingList: []",
         current="mergingList: [{name: 1, other: a}, {name: 2, other: b}]",
         three_way="mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]",
         result="mergingList: []"),
    Case("delete all maps from empty merging list",
         original="mergingList: [{name: 1}, {name: 2}]",
         two_way="mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]",
         modified="mergingList: []",
         current="mergingList: []",
         three_way="mergingList: [{name: 1, $patch: delete}, {name: 2, $patch: delete}]",
         result="mergingList: []"),
    Case("merge empty merging lists",
         original="mergingList: []", two_way="{}", modified="mergingList: []",
         current="mergingList: []", three_way="{}", result="mergingList: []"),
    Case("defined null values should propagate overwrite current fields (with conflict)",
         original="{name: 2}", two_way="{name: 1, value: 1, other: null}",
         two_way_result="{name: 1, value: 1}", modified="{name: 1, value: 1, other: null}",
         current="{name: a, other: a}", three_way="{name: 1, value: 1, other: null}",
         result="{name: 1, value: 1}"),
    Case("defined null values should propagate removing original fields",
         original="{name: original-name, value: original-value}",
         current="{name: original-name, value: original-value, other: current-other}",
         modified="{name: modified-name, value: null}",
         two_way="{name: modified-name, value: null}", two_way_result="{name: modified-name}",
         three_way="{name: modified-name, value: null}",
         result="{name: modified-name, other: current-other}"),
    Case("nil patch with retainKeys map",
         original="{name: a, retainKeysMap: {name: foo}}",
         current="{name: a, value: b, retainKeysMap: {name: foo}}",
         modified="{name: a, retainKeysMap: {name: foo}}",
         two_way="{}", three_way="{}",
         result="{name: a, value: b, retainKeysMap: {name: foo}}"),
    Case("retainKeys map with no change should not be present",
         original="{name: a, retainKeysMap: {name: foo}}",
         current="{name: a, other: c, retainKeysMap: {name: foo}}",
         modified="{name: a, value: b, retainKeysMap: {name: foo}}",
         two_way="{value: b}", three_way="{value: b}",
         result="{name: a, value: b, other: c, retainKeysMap: {name: foo}}"),
]

# --- strategicMergePatchRawTestCases (raw JSON/YAML, two-way and three-way) ---------------------

_ORDER_12 = "$setElementOrder/mergingList: [{name: 1}, {name: 2}]"

RAW = [
    Case("delete items in lists of scalars",
         original="mergingIntList: [1, 2, 3]",
         two_way="{$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}",
         modified="mergingIntList: [1, 2]",
         current="mergingIntList: [1, 2, 3, 4]",
         three_way="{$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}",
         result="mergingIntList: [1, 2, 4]"),
    Case("delete all duplicate items in lists of scalars",
         original="mergingIntList: [1, 2, 3, 3]",
         two_way="{$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}",
         modified="mergingIntList: [1, 2]",
         current="mergingIntList: [1, 2, 3, 3, 4]",
         three_way="{$setElementOrder/mergingIntList: [1, 2], $deleteFromPrimitiveList/mergingIntList: [3]}",
         result="mergingIntList: [1, 2, 4]"),
    Case("add and delete items in lists of scalars",
         original="mergingIntList: [1, 2, 3]",
         two_way="""
           $setElementOrder/mergingIntList: [1, 2, 4]
           $deleteFromPrimitiveList/mergingIntList: [3]
           mergingIntList: [4]
         """,
         modified="mergingIntList: [1, 2, 4]",
         current="mergingIntList: [1, 2, 3, 4]",
         three_way="{$setElementOrder/mergingIntList: [1, 2, 4], $deleteFromPrimitiveList/mergingIntList: [3]}",
         result="mergingIntList: [1, 2, 4]"),
    Case("merge lists of maps",
         original="mergingList: [{name: 1}, {name: 2, value: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 4}, {name: 1}, {name: 2}, {name: 3}]
           mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]
         """,
         modified="mergingList: [{name: 4, value: 4}, {name: 1}, {name: 2, value: 2}, {name: 3, value: 3}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]",
         three_way="""
           $setElementOrder/mergingList: [{name: 4}, {name: 1}, {name: 2}, {name: 3}]
           mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]
         """,
         result="""
           mergingList: [{name: 4, value: 4}, {name: 1, other: a}, {name: 2, value: 2, other: b},
                         {name: 3, value: 3}]
         """),
    Case("merge lists of maps with conflict",
         original="mergingList: [{name: 1}, {name: 2, value: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}]
           mergingList: [{name: 3, value: 3}]
         """,
         modified="mergingList: [{name: 1}, {name: 2, value: 2}, {name: 3, value: 3}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 3, other: b}]",
         three_way="""
           $setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}]
           mergingList: [{name: 2, value: 2}, {name: 3, value: 3}]
         """,
         result="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]"),
    Case("add field to map in merging list",
         original="mergingList: [{name: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: 1}}]}}",
         modified="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: 1}}]}}",
         result="mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]"),
    Case("add field to map in merging list (2)",
         original="mergingList: [{name: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: 1}}]}}",
         modified="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: 1}}]}}",
         result="mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]"),
    Case("add field to map in merging list with conflict",
         original="mergingList: [{name: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: 1}}]}}",
         modified="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, other: a}, {name: 3, value: 2, other: b}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: 1}}, {{name: 2, value: 2}}]}}",
         result="mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2}, {name: 3, value: 2, other: b}]"),
    Case("add duplicate field to map in merging list",
         original="mergingList: [{name: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: 1}}]}}",
         modified="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]",
         three_way="{}",
         result="mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]"),
    Case("add an item that already exists in current object in merging list",
         original="mergingList: [{name: 1, value: a}, {name: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 1}, {name: 2}, {name: 3}]
           mergingList: [{name: 3}]
         """,
         modified="mergingList: [{name: 1, value: a}, {name: 2}, {name: 3}]",
         current="mergingList: [{name: 1, value: a, other: x}, {name: 2}, {name: 3}]",
         three_way="{}",
         result="mergingList: [{name: 1, value: a, other: x}, {name: 2}, {name: 3}]"),
    Case("add duplicate field to map in merging list with conflict",
         original="mergingList: [{name: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: 1}}]}}",
         modified="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 3, other: b}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 2, value: 2}}]}}",
         result="mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]"),
    Case("replace map field value in merging list",
         original="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: a}}]}}",
         modified="mergingList: [{name: 1, value: a}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: a}}]}}",
         result="mergingList: [{name: 1, value: a, other: a}, {name: 2, value: 2, other: b}]"),
    Case("replace map field value in merging list with conflict",
         original="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: a}}]}}",
         modified="mergingList: [{name: 1, value: a}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, value: 3, other: a}, {name: 2, value: 2, other: b}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: a}}]}}",
         result="mergingList: [{name: 1, value: a, other: a}, {name: 2, value: 2, other: b}]"),
    Case("delete map from merging list",
         original="mergingList: [{name: 1}, {name: 2}]",
         two_way="{$setElementOrder/mergingList: [{name: 2}], mergingList: [{name: 1, $patch: delete}]}",
         modified="mergingList: [{name: 2}]",
         current="mergingList: [{name: 1}, {name: 2, other: b}]",
         three_way="{$setElementOrder/mergingList: [{name: 2}], mergingList: [{name: 1, $patch: delete}]}",
         result="mergingList: [{name: 2, other: b}]"),
    Case("delete map from merging list with conflict",
         original="mergingList: [{name: 1}, {name: 2}]",
         two_way="{$setElementOrder/mergingList: [{name: 2}], mergingList: [{name: 1, $patch: delete}]}",
         modified="mergingList: [{name: 2}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, other: b}]",
         three_way="{$setElementOrder/mergingList: [{name: 2}], mergingList: [{name: 1, $patch: delete}]}",
         result="mergingList: [{name: 2, other: b}]"),
    Case("delete missing map from merging list",
         original="mergingList: [{name: 1}, {name: 2}]",
         two_way="{$setElementOrder/mergingList: [{name: 2}], mergingList: [{name: 1, $patch: delete}]}",
         modified="mergingList: [{name: 2}]",
         current="mergingList: [{name: 2, other: b}]",
         three_way="{$setElementOrder/mergingList: [{name: 2}], mergingList: [{name: 1, $patch: delete}]}",
         result="mergingList: [{name: 2, other: b}]"),
    Case("delete missing map from merging list with conflict",
         original="mergingList: [{name: 1}, {name: 2}]",
         two_way="{$setElementOrder/mergingList: [{name: 2}], mergingList: [{name: 1, $patch: delete}]}",
         modified="mergingList: [{name: 2}]",
         current="mergingList: [{name: 3, other: a}]",
         three_way="""
           $setElementOrder/mergingList: [{name: 2}]
           mergingList: [{name: 2}, {name: 1, $patch: delete}]
         """,
         result="mergingList: [{name: 2}, {name: 3, other: a}]"),
    Case("add map and delete map from merging list",
         original="mergingList: [{name: 1}, {name: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 2}, {name: 3}]
           mergingList: [{name: 3}, {name: 1, $patch: delete}]
         """,
         modified="mergingList: [{name: 2}, {name: 3}]",
         current="mergingList: [{name: 1}, {name: 2, other: b}, {name: 4, other: c}]",
         three_way="""
           $setElementOrder/mergingList: [{name: 2}, {name: 3}]
           mergingList: [{name: 3}, {name: 1, $patch: delete}]
         """,
         result="mergingList: [{name: 2, other: b}, {name: 4, other: c}, {name: 3}]"),
    Case("add map and delete map from merging list with conflict",
         original="mergingList: [{name: 1}, {name: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 2}, {name: 3}]
           mergingList: [{name: 3}, {name: 1, $patch: delete}]
         """,
         modified="mergingList: [{name: 2}, {name: 3}]",
         current="mergingList: [{name: 1, other: a}, {name: 4, other: c}]",
         three_way="""
           $setElementOrder/mergingList: [{name: 2}, {name: 3}]
           mergingList: [{name: 2}, {name: 3}, {name: 1, $patch: delete}]
         """,
         result="mergingList: [{name: 4, other: c}, {name: 2}, {name: 3}]"),
    Case("delete field from map in merging list",
         original="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: null}}]}}",
         modified="mergingList: [{name: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: null}}]}}",
         result="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]"),
    Case("delete field from map in merging list with conflict",
         original="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: null}}]}}",
         modified="mergingList: [{name: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, value: a, other: a}, {name: 2, value: 2}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: null}}]}}",
         result="mergingList: [{name: 1, other: a}, {name: 2, value: 2}]"),
    Case("delete missing field from map in merging list",
         original="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: null}}]}}",
         modified="mergingList: [{name: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: null}}]}}",
         result="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]"),
    Case("delete missing field from map in merging list with conflict",
         original="mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: null}}]}}",
         modified="mergingList: [{name: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, other: b}]",
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, value: null}}, {{name: 2, value: 2}}]}}",
         result="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]"),
    Case("replace non merging list nested in merging list",
         original="mergingList: [{name: 1, nonMergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, nonMergingList: [{{name: 1, value: 1}}]}}]}}",
         modified="mergingList: [{name: 1, nonMergingList: [{name: 1, value: 1}]}, {name: 2}]",
         current="""
           mergingList: [{name: 1, other: a, nonMergingList: [{name: 1}, {name: 2, value: 2}]},
                         {name: 2, other: b}]
         """,
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, nonMergingList: [{{name: 1, value: 1}}]}}]}}",
         result="""
           mergingList: [{name: 1, other: a, nonMergingList: [{name: 1, value: 1}]}, {name: 2, other: b}]
         """),
    Case("replace non merging list nested in merging list with value conflict",
         original="mergingList: [{name: 1, nonMergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, nonMergingList: [{{name: 1, value: 1}}]}}]}}",
         modified="mergingList: [{name: 1, nonMergingList: [{name: 1, value: 1}]}, {name: 2}]",
         current="""
           mergingList: [{name: 1, other: a, nonMergingList: [{name: 1, value: c}]}, {name: 2, other: b}]
         """,
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, nonMergingList: [{{name: 1, value: 1}}]}}]}}",
         result="""
           mergingList: [{name: 1, other: a, nonMergingList: [{name: 1, value: 1}]}, {name: 2, other: b}]
         """),
    Case("replace non merging list nested in merging list with deletion conflict",
         original="mergingList: [{name: 1, nonMergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]",
         two_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, nonMergingList: [{{name: 1, value: 1}}]}}]}}",
         modified="mergingList: [{name: 1, nonMergingList: [{name: 1, value: 1}]}, {name: 2}]",
         current="""
           mergingList: [{name: 1, other: a, nonMergingList: [{name: 2, value: 2}]}, {name: 2, other: b}]
         """,
         three_way=f"{{{_ORDER_12}, mergingList: [{{name: 1, nonMergingList: [{{name: 1, value: 1}}]}}]}}",
         result="""
           mergingList: [{name: 1, other: a, nonMergingList: [{name: 1, value: 1}]}, {name: 2, other: b}]
         """),
    Case("add field to map in merging list nested in merging list",
         original="mergingList: [{name: 1, mergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]",
         two_way=f"""
           {_ORDER_12}
           mergingList:
           - $setElementOrder/mergingList: [{{name: 1}}, {{name: 2}}]
             name: 1
             mergingList: [{{name: 1, value: 1}}]
         """,
         modified="mergingList: [{name: 1, mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]}, {name: 2}]",
         current="""
           mergingList: [{name: 1, other: a, mergingList: [{name: 1}, {name: 2, value: 2}]},
                         {name: 2, other: b}]
         """,
         three_way=f"""
           {_ORDER_12}
           mergingList:
           - $setElementOrder/mergingList: [{{name: 1}}, {{name: 2}}]
             name: 1
             mergingList: [{{name: 1, value: 1}}]
         """,
         result="""
           mergingList: [{name: 1, other: a, mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]},
                         {name: 2, other: b}]
         """),
    Case("add field to map in merging list nested in merging list with value conflict",
         original="mergingList: [{name: 1, mergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]",
         two_way=f"""
           {_ORDER_12}
           mergingList:
           - $setElementOrder/mergingList: [{{name: 1}}, {{name: 2}}]
             name: 1
             mergingList: [{{name: 1, value: 1}}]
         """,
         modified="mergingList: [{name: 1, mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]}, {name: 2}]",
         current="""
           mergingList:
           - {name: 1, other: a, mergingList: [{name: 1, value: a, other: c}, {name: 2, value: b, other: d}]}
           - {name: 2, other: b}
         """,
         three_way=f"""
           {_ORDER_12}
           mergingList:
           - $setElementOrder/mergingList: [{{name: 1}}, {{name: 2}}]
             name: 1
             mergingList: [{{name: 1, value: 1}}, {{name: 2, value: 2}}]
         """,
         result="""
           mergingList:
           - {name: 1, other: a, mergingList: [{name: 1, value: 1, other: c}, {name: 2, value: 2, other: d}]}
           - {name: 2, other: b}
         """),
    Case("add field to map in merging list nested in merging list with deletion conflict",
         original="mergingList: [{name: 1, mergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]",
         two_way=f"""
           {_ORDER_12}
           mergingList:
           - $setElementOrder/mergingList: [{{name: 1}}, {{name: 2}}]
             name: 1
             mergingList: [{{name: 1, value: 1}}]
         """,
         modified="mergingList: [{name: 1, mergingList: [{name: 1, value: 1}, {name: 2, value: 2}]}, {name: 2}]",
         current="""
           mergingList: [{name: 1, other: a, mergingList: [{name: 2, value: 2, other: d}]}, {name: 2, other: b}]
         """,
         three_way=f"""
           {_ORDER_12}
           mergingList:
           - $setElementOrder/mergingList: [{{name: 1}}, {{name: 2}}]
             name: 1
             mergingList: [{{name: 1, value: 1}}]
         """,
         result="""
           mergingList:
           - {name: 1, other: a, mergingList: [{name: 1, value: 1}, {name: 2, value: 2, other: d}]}
           - {name: 2, other: b}
         """),
    Case("add field to map in merging list nested in merging list with deletion conflict (2)",
         original="mergingList: [{name: 1, mergingList: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]",
         two_way=f"""
           {_ORDER_12}
           mergingList:
           - $setElementOrder/mergingList: [{{name: 2}}, {{name: 1}}]
             name: 1
             mergingList: [{{name: 1, value: 1}}]
         """,
         modified="mergingList: [{name: 1, mergingList: [{name: 2, value: 2}, {name: 1, value: 1}]}, {name: 2}]",
         current="""
           mergingList: [{name: 1, other: a, mergingList: [{name: 2, value: 2, other: d}]}, {name: 2, other: b}]
         """,
         three_way=f"""
           {_ORDER_12}
           mergingList:
           - $setElementOrder/mergingList: [{{name: 2}}, {{name: 1}}]
             name: 1
             mergingList: [{{name: 1, value: 1}}]
         """,
         result="""
           mergingList:
           - {name: 1, other: a, mergingList: [{name: 2, value: 2, other: d}, {name: 1, value: 1}]}
           - {name: 2, other: b}
         """),
    Case("add map to merging list by pointer",
         original="mergeItemPtr: [{name: 1}]",
         two_way="{$setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}], mergeItemPtr: [{name: 2}]}",
         modified="mergeItemPtr: [{name: 1}, {name: 2}]",
         current="mergeItemPtr: [{name: 1, other: a}, {name: 3}]",
         three_way="{$setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}], mergeItemPtr: [{name: 2}]}",
         result="mergeItemPtr: [{name: 1, other: a}, {name: 2}, {name: 3}]"),
    Case("add map to merging list by pointer with conflict",
         original="mergeItemPtr: [{name: 1}]",
         two_way="{$setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}], mergeItemPtr: [{name: 2}]}",
         modified="mergeItemPtr: [{name: 1}, {name: 2}]",
         current="mergeItemPtr: [{name: 3}]",
         three_way="""
           {$setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}], mergeItemPtr: [{name: 1}, {name: 2}]}
         """,
         result="mergeItemPtr: [{name: 1}, {name: 2}, {name: 3}]"),
    Case("add field to map in merging list by pointer",
         original="mergeItemPtr: [{name: 1, mergeItemPtr: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]",
         two_way="""
           $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
           mergeItemPtr:
           - $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
             name: 1
             mergeItemPtr: [{name: 1, value: 1}]
         """,
         modified="mergeItemPtr: [{name: 1, mergeItemPtr: [{name: 1, value: 1}, {name: 2, value: 2}]}, {name: 2}]",
         current="""
           mergeItemPtr:
           - {name: 1, other: a, mergeItemPtr: [{name: 1, other: a}, {name: 2, value: 2, other: b}]}
           - {name: 2, other: b}
         """,
         three_way="""
           $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
           mergeItemPtr:
           - $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
             name: 1
             mergeItemPtr: [{name: 1, value: 1}]
         """,
         result="""
           mergeItemPtr:
           - {name: 1, other: a, mergeItemPtr: [{name: 1, value: 1, other: a}, {name: 2, value: 2, other: b}]}
           - {name: 2, other: b}
         """),
    Case("add field to map in merging list by pointer with conflict",
         original="mergeItemPtr: [{name: 1, mergeItemPtr: [{name: 1}, {name: 2, value: 2}]}, {name: 2}]",
         two_way="""
           $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
           mergeItemPtr:
           - $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
             name: 1
             mergeItemPtr: [{name: 1, value: 1}]
         """,
         modified="mergeItemPtr: [{name: 1, mergeItemPtr: [{name: 1, value: 1}, {name: 2, value: 2}]}, {name: 2}]",
         current="""
           mergeItemPtr:
           - {name: 1, other: a, mergeItemPtr: [{name: 1, value: a}, {name: 2, value: 2, other: b}]}
           - {name: 2, other: b}
         """,
         three_way="""
           $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
           mergeItemPtr:
           - $setElementOrder/mergeItemPtr: [{name: 1}, {name: 2}]
             name: 1
             mergeItemPtr: [{name: 1, value: 1}]
         """,
         result="""
           mergeItemPtr:
           - {name: 1, other: a, mergeItemPtr: [{name: 1, value: 1}, {name: 2, value: 2, other: b}]}
           - {name: 2, other: b}
         """),
    Case("merge lists of scalars",
         original="mergingIntList: [1, 2]",
         two_way="{$setElementOrder/mergingIntList: [1, 2, 3], mergingIntList: [3]}",
         modified="mergingIntList: [1, 2, 3]",
         current="mergingIntList: [1, 2, 4]",
         three_way="{$setElementOrder/mergingIntList: [1, 2, 3], mergingIntList: [3]}",
         result="mergingIntList: [1, 2, 3, 4]"),
    Case("add duplicate field to map in merging int list",
         original="mergingIntList: [1, 2]",
         two_way="{$setElementOrder/mergingIntList: [1, 2, 3], mergingIntList: [3]}",
         modified="mergingIntList: [1, 2, 3]",
         current="mergingIntList: [1, 2, 3]",
         three_way="{}",
         result="mergingIntList: [1, 2, 3]"),
    Case("add an item in a list of primitives and preserve order",
         original="mergingIntList: [1, 2]",
         two_way="{$setElementOrder/mergingIntList: [3, 1, 2], mergingIntList: [3]}",
         modified="mergingIntList: [3, 1, 2]",
         current="mergingIntList: [1, 4, 2]",
         three_way="{$setElementOrder/mergingIntList: [3, 1, 2], mergingIntList: [3]}",
         result="mergingIntList: [3, 1, 4, 2]"),
    Case("delete an item in a list of primitives and preserve order",
         original="mergingIntList: [1, 2, 3]",
         two_way="{$setElementOrder/mergingIntList: [2, 1], $deleteFromPrimitiveList/mergingIntList: [3]}",
         modified="mergingIntList: [2, 1]",
         current="mergingIntList: [1, 2, 3]",
         three_way="{$setElementOrder/mergingIntList: [2, 1], $deleteFromPrimitiveList/mergingIntList: [3]}",
         result="mergingIntList: [2, 1]"),
    Case("add an item in a list and preserve order",
         original="mergingList: [{name: 1}, {name: 2, value: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 3}, {name: 1}, {name: 2}]
           mergingList: [{name: 3, value: 3}]
         """,
         modified="mergingList: [{name: 3, value: 3}, {name: 1}, {name: 2, value: 2}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]",
         three_way="""
           $setElementOrder/mergingList: [{name: 3}, {name: 1}, {name: 2}]
           mergingList: [{name: 3, value: 3}]
         """,
         result="mergingList: [{name: 3, value: 3}, {name: 1, other: a}, {name: 2, value: 2, other: b}]"),
    Case("add multiple items in a list and preserve order",
         original="mergingList: [{name: 1}, {name: 2, value: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 1}, {name: 4}, {name: 2}, {name: 3}]
           mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]
         """,
         modified="mergingList: [{name: 1}, {name: 4, value: 4}, {name: 2, value: 2}, {name: 3, value: 3}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}]",
         three_way="""
           $setElementOrder/mergingList: [{name: 1}, {name: 4}, {name: 2}, {name: 3}]
           mergingList: [{name: 4, value: 4}, {name: 3, value: 3}]
         """,
         result="""
           mergingList: [{name: 1, other: a}, {name: 4, value: 4}, {name: 2, value: 2, other: b},
                         {name: 3, value: 3}]
         """),
    Case("delete an item in a list and preserve order",
         original="mergingList: [{name: 1}, {name: 3, value: 3}, {name: 2, value: 2}]",
         two_way="{$setElementOrder/mergingList: [{name: 2}, {name: 1}], mergingList: [{name: 3, $patch: delete}]}",
         modified="mergingList: [{name: 2, value: 2}, {name: 1}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]",
         three_way="""
           {$setElementOrder/mergingList: [{name: 2}, {name: 1}], mergingList: [{name: 3, $patch: delete}]}
         """,
         result="mergingList: [{name: 2, value: 2, other: b}, {name: 1, other: a}]"),
    Case("change an item in a list and preserve order",
         original="mergingList: [{name: 1}, {name: 3, value: 3}, {name: 2, value: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 2}, {name: 3}, {name: 1}]
           mergingList: [{name: 3, value: x}]
         """,
         modified="mergingList: [{name: 2, value: 2}, {name: 3, value: x}, {name: 1}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]",
         three_way="""
           $setElementOrder/mergingList: [{name: 2}, {name: 3}, {name: 1}]
           mergingList: [{name: 3, value: x}]
         """,
         result="mergingList: [{name: 2, value: 2, other: b}, {name: 3, value: x}, {name: 1, other: a}]"),
    Case("add and delete an item in a list and preserve order",
         original="mergingList: [{name: 1}, {name: 3, value: 3}, {name: 2, value: 2}]",
         two_way="""
           $setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 1}]
           mergingList: [{name: 4, value: 4}, {name: 3, $patch: delete}]
         """,
         modified="mergingList: [{name: 4, value: 4}, {name: 2, value: 2}, {name: 1}]",
         current="mergingList: [{name: 1, other: a}, {name: 2, value: 2, other: b}, {name: 3, value: 3}]",
         three_way="""
           $setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 1}]
           mergingList: [{name: 4, value: 4}, {name: 3, $patch: delete}]
         """,
         result="mergingList: [{name: 4, value: 4}, {name: 2, value: 2, other: b}, {name: 1, other: a}]"),
    Case("set elements order in a list",
         original="mergingList: [{name: 1}, {name: 3, value: 3}, {name: 4, value: 4}, {name: 2, value: 2}]",
         two_way="$setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 3}, {name: 1}]",
         modified="mergingList: [{name: 4, value: 4}, {name: 2, value: 2}, {name: 3, value: 3}, {name: 1}]",
         current="""
           mergingList: [{name: 1, other: a}, {name: 3, value: 3}, {name: 4, value: 4}, {name: 2, value: 2}]
         """,
         three_way="$setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 3}, {name: 1}]",
         result="""
           mergingList: [{name: 4, value: 4}, {name: 2, value: 2}, {name: 3, value: 3}, {name: 1, other: a}]
         """),
    Case("set elements order in a list with server-only items",
         original="mergingList: [{name: 1}, {name: 3, value: 3}, {name: 4, value: 4}, {name: 2, value: 2}]",
         two_way="$setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 3}, {name: 1}]",
         modified="mergingList: [{name: 4, value: 4}, {name: 2, value: 2}, {name: 3, value: 3}, {name: 1}]",
         current="""
           mergingList: [{name: 1, other: a}, {name: 3, value: 3}, {name: 4, value: 4}, {name: 2, value: 2},
                         {name: 9}]
         """,
         three_way="$setElementOrder/mergingList: [{name: 4}, {name: 2}, {name: 3}, {name: 1}]",
         result="""
           mergingList: [{name: 4, value: 4}, {name: 2, value: 2}, {name: 3, value: 3}, {name: 1, other: a},
                         {name: 9}]
         """),
    Case("set elements order in a list with server-only items 2",
         original="mergingList: [{name: 1}, {name: 2, value: 2}, {name: 3, value: 3}, {name: 4, value: 4}]",
         two_way="$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}]",
         modified="mergingList: [{name: 2, value: 2}, {name: 1}, {name: 4, value: 4}, {name: 3, value: 3}]",
         current="""
           mergingList: [{name: 1, other: a}, {name: 2, value: 2}, {name: 9}, {name: 3, value: 3},
                         {name: 4, value: 4}]
         """,
         three_way="$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}]",
         result="""
           mergingList: [{name: 2, value: 2}, {name: 1, other: a}, {name: 9}, {name: 4, value: 4},
                         {name: 3, value: 3}]
         """),
    Case("set elements order in a list with server-only items 3",
         original="mergingList: [{name: 1}, {name: 2, value: 2}, {name: 3, value: 3}, {name: 4, value: 4}]",
         two_way="$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}]",
         modified="mergingList: [{name: 2, value: 2}, {name: 1}, {name: 4, value: 4}, {name: 3, value: 3}]",
         current="""
           mergingList: [{name: 1, other: a}, {name: 2, value: 2}, {name: 7}, {name: 9}, {name: 8},
                         {name: 3, value: 3}, {name: 4, value: 4}]
         """,
         three_way="$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}]",
         result="""
           mergingList: [{name: 2, value: 2}, {name: 1, other: a}, {name: 7}, {name: 9}, {name: 8},
                         {name: 4, value: 4}, {name: 3, value: 3}]
         """),
    Case("add an item in a int list and preserve order",
         original="mergingIntList: [1, 2]",
         two_way="{$setElementOrder/mergingIntList: [3, 1, 2], mergingIntList: [3]}",
         modified="mergingIntList: [3, 1, 2]",
         current="mergingIntList: [1, 2]",
         three_way="{$setElementOrder/mergingIntList: [3, 1, 2], mergingIntList: [3]}",
         result="mergingIntList: [3, 1, 2]"),
    Case("add multiple items in a int list and preserve order",
         original="mergingIntList: [1, 2]",
         two_way="{$setElementOrder/mergingIntList: [1, 4, 2, 3], mergingIntList: [4, 3]}",
         modified="mergingIntList: [1, 4, 2, 3]",
         current="mergingIntList: [1, 2]",
         three_way="{$setElementOrder/mergingIntList: [1, 4, 2, 3], mergingIntList: [4, 3]}",
         result="mergingIntList: [1, 4, 2, 3]"),
    Case("delete an item in a int list and preserve order",
         original="mergingIntList: [1, 3, 2]",
         two_way="{$setElementOrder/mergingIntList: [2, 1], $deleteFromPrimitiveList/mergingIntList: [3]}",
         modified="mergingIntList: [2, 1]",
         current="mergingIntList: [1, 2, 3]",
         three_way="{$setElementOrder/mergingIntList: [2, 1], $deleteFromPrimitiveList/mergingIntList: [3]}",
         result="mergingIntList: [2, 1]"),
    Case("add and delete an item in a int list and preserve order",
         original="mergingIntList: [1, 3, 2]",
         two_way="""
           $setElementOrder/mergingIntList: [4, 2, 1]
           mergingIntList: [4]
           $deleteFromPrimitiveList/mergingIntList: [3]
         """,
         modified="mergingIntList: [4, 2, 1]",
         current="mergingIntList: [1, 2, 3]",
         three_way="""
           $setElementOrder/mergingIntList: [4, 2, 1]
           mergingIntList: [4]
           $deleteFromPrimitiveList/mergingIntList: [3]
         """,
         result="mergingIntList: [4, 2, 1]"),
    Case("set elements order in a int list",
         original="mergingIntList: [1, 3, 4, 2]",
         two_way="$setElementOrder/mergingIntList: [4, 2, 3, 1]",
         modified="mergingIntList: [4, 2, 3, 1]",
         current="mergingIntList: [1, 3, 4, 2]",
         three_way="$setElementOrder/mergingIntList: [4, 2, 3, 1]",
         result="mergingIntList: [4, 2, 3, 1]"),
    Case("set elements order in a int list with server-only items",
         original="mergingIntList: [1, 3, 4, 2]",
         two_way="$setElementOrder/mergingIntList: [4, 2, 3, 1]",
         modified="mergingIntList: [4, 2, 3, 1]",
         current="mergingIntList: [1, 3, 4, 2, 9]",
         three_way="$setElementOrder/mergingIntList: [4, 2, 3, 1]",
         result="mergingIntList: [4, 2, 3, 1, 9]"),
    Case("set elements order in a int list with server-only items 2",
         original="mergingIntList: [1, 2, 3, 4]",
         two_way="$setElementOrder/mergingIntList: [2, 1, 4, 3]",
         modified="mergingIntList: [2, 1, 4, 3]",
         current="mergingIntList: [1, 2, 9, 3, 4]",
         three_way="$setElementOrder/mergingIntList: [2, 1, 4, 3]",
         result="mergingIntList: [2, 1, 9, 4, 3]"),
    Case("set elements order in a int list with server-only items 3",
         original="mergingIntList: [1, 2, 3, 4]",
         two_way="$setElementOrder/mergingIntList: [2, 1, 4, 3]",
         modified="mergingIntList: [2, 1, 4, 3]",
         current="mergingIntList: [1, 2, 7, 9, 8, 3, 4]",
         three_way="$setElementOrder/mergingIntList: [2, 1, 4, 3]",
         result="mergingIntList: [2, 1, 7, 9, 8, 4, 3]"),
    Case("behavior of set element order for a merging list with duplicate",
         original="mergingList: [{name: 1}, {name: 2, value: dup1}, {name: 3}, {name: 2, value: dup2}, {name: 4}]",
         current="mergingList: [{name: 1}, {name: 2, value: dup1}, {name: 3}, {name: 2, value: dup2}, {name: 4}]",
         modified="mergingList: [{name: 2, value: dup1}, {name: 1}, {name: 4}, {name: 3}, {name: 2, value: dup2}]",
         two_way="$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}, {name: 2}]",
         two_way_result="""
           mergingList: [{name: 2, value: dup1}, {name: 2, value: dup2}, {name: 1}, {name: 4}, {name: 3}]
         """,
         three_way="$setElementOrder/mergingList: [{name: 2}, {name: 1}, {name: 4}, {name: 3}, {name: 2}]",
         result="mergingList: [{name: 2, value: dup1}, {name: 2, value: dup2}, {name: 1}, {name: 4}, {name: 3}]"),
    Case("behavior of set element order for a merging int list with duplicate",
         original="mergingIntList: [1, 2, 3, 2, 4]",
         current="mergingIntList: [1, 2, 3, 2, 4]",
         modified="mergingIntList: [2, 1, 4, 3, 2]",
         two_way="$setElementOrder/mergingIntList: [2, 1, 4, 3, 2]",
         two_way_result="mergingIntList: [2, 2, 1, 4, 3]",
         three_way="$setElementOrder/mergingIntList: [2, 1, 4, 3, 2]",
         result="mergingIntList: [2, 2, 1, 4, 3]"),
    Case("retainKeys map should clear defaulted field",
         original="{}",
         current="retainKeysMap: {value: foo}",
         modified="retainKeysMap: {other: bar}",
         two_way="retainKeysMap: {other: bar}",
         three_way="retainKeysMap: {$retainKeys: [other], other: bar}",
         result="retainKeysMap: {other: bar}"),
    Case("retainKeys map should clear defaulted field with conflict (discriminated union)",
         original="{}",
         current="retainKeysMap: {name: type1, value: foo}",
         modified="retainKeysMap: {name: type2, other: bar}",
         two_way="retainKeysMap: {name: type2, other: bar}",
         three_way="retainKeysMap: {$retainKeys: [name, other], name: type2, other: bar}",
         result="retainKeysMap: {name: type2, other: bar}"),
    Case("retainKeys map adds a field",
         original="retainKeysMap: {name: foo}",
         current="retainKeysMap: {name: foo}",
         modified="retainKeysMap: {name: foo, value: bar}",
         two_way="retainKeysMap: {$retainKeys: [name, value], value: bar}",
         three_way="retainKeysMap: {$retainKeys: [name, value], value: bar}",
         result="retainKeysMap: {name: foo, value: bar}"),
    Case("retainKeys map adds a field and clear a field",
         original="retainKeysMap: {name: foo}",
         current="retainKeysMap: {name: foo, other: a}",
         modified="retainKeysMap: {name: foo, value: bar}",
         two_way="retainKeysMap: {$retainKeys: [name, value], value: bar}",
         three_way="retainKeysMap: {$retainKeys: [name, value], value: bar}",
         result="retainKeysMap: {name: foo, value: bar}"),
    Case("retainKeys map deletes a field",
         original="retainKeysMap: {name: foo, value: bar}",
         current="retainKeysMap: {name: foo, value: bar}",
         modified="retainKeysMap: {name: foo}",
         two_way="retainKeysMap: {$retainKeys: [name], value: null}",
         three_way="retainKeysMap: {$retainKeys: [name], value: null}",
         result="retainKeysMap: {name: foo}"),
    Case("retainKeys map deletes a field and clears a field",
         original="retainKeysMap: {name: foo, value: bar}",
         current="retainKeysMap: {name: foo, value: bar, other: a}",
         modified="retainKeysMap: {name: foo}",
         two_way="retainKeysMap: {$retainKeys: [name], value: null}",
         three_way="retainKeysMap: {$retainKeys: [name], value: null}",
         result="retainKeysMap: {name: foo}"),
    Case("retainKeys map clears a field",
         original="retainKeysMap: {name: foo, value: bar}",
         current="retainKeysMap: {name: foo, value: bar, other: a}",
         modified="retainKeysMap: {name: foo, value: bar}",
         two_way="{}",
         three_way="retainKeysMap: {$retainKeys: [name, value]}",
         result="retainKeysMap: {name: foo, value: bar}"),
    Case("retainKeys map nested map with no change",
         original="retainKeysMap: {name: foo, simpleMap: {key1: a}}",
         current="retainKeysMap: {name: foo, simpleMap: {key1: a}}",
         modified="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a}}",
         two_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], value: bar}",
         three_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], value: bar}",
         result="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a}}"),
    Case("retainKeys map adds a field in a nested map",
         original="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a}}",
         current="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key3: c}}",
         modified="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key2: b}}",
         two_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key2: b}}",
         three_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key2: b}}",
         result="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key2: b, key3: c}}"),
    Case("retainKeys map deletes a field in a nested map",
         original="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key2: b}}",
         current="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key2: b, key3: c}}",
         modified="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a}}",
         two_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key2: null}}",
         three_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key2: null}}",
         result="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key3: c}}"),
    Case("retainKeys map changes a field in a nested map",
         original="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key2: b}}",
         current="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: a, key2: b, key3: c}}",
         modified="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: x, key2: b}}",
         two_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key1: x}}",
         three_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key1: x}}",
         result="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: x, key2: b, key3: c}}"),
    Case("retainKeys map changes a field in a nested map with conflict",
         original="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: old, key2: b}}",
         current="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: new, key2: b, key3: c}}",
         modified="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: modified, key2: b}}",
         two_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key1: modified}}",
         three_way="retainKeysMap: {$retainKeys: [name, simpleMap, value], simpleMap: {key1: modified}}",
         result="retainKeysMap: {name: foo, value: bar, simpleMap: {key1: modified, key2: b, key3: c}}"),
    Case("retainKeys map replaces non-merging list",
         original="retainKeysMap: {name: foo, value: bar, nonMergingList: [{name: a}, {name: b}]}",
         current="retainKeysMap: {name: foo, value: bar, nonMergingList: [{name: a}, {name: b}]}",
         modified="retainKeysMap: {name: foo, value: bar, nonMergingList: [{name: a}, {name: c}, {name: b}]}",
         two_way="""
           retainKeysMap:
             $retainKeys: [name, nonMergingList, value]
             nonMergingList: [{name: a}, {name: c}, {name: b}]
         """,
         three_way="""
           retainKeysMap:
             $retainKeys: [name, nonMergingList, value]
             nonMergingList: [{name: a}, {name: c}, {name: b}]
         """,
         result="retainKeysMap: {name: foo, value: bar, nonMergingList: [{name: a}, {name: c}, {name: b}]}"),
    Case("retainKeys map nested non-merging list with no change",
         original="retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}]}",
         current="retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}]}",
         modified="retainKeysMap: {name: foo, value: bar, nonMergingList: [{name: a}, {name: b}]}",
         two_way="retainKeysMap: {$retainKeys: [name, nonMergingList, value], value: bar}",
         three_way="retainKeysMap: {$retainKeys: [name, nonMergingList, value], value: bar}",
         result="retainKeysMap: {name: foo, value: bar, nonMergingList: [{name: a}, {name: b}]}"),
    Case("retainKeys map nested non-merging list with no change with conflict",
         original="retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}]}",
         current="retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}, {name: c}]}",
         modified="retainKeysMap: {name: foo, value: bar, nonMergingList: [{name: a}, {name: b}]}",
         two_way="retainKeysMap: {$retainKeys: [name, nonMergingList, value], value: bar}",
         three_way="""
           retainKeysMap:
             $retainKeys: [name, nonMergingList, value]
             value: bar
             nonMergingList: [{name: a}, {name: b}]
         """,
         result="retainKeysMap: {name: foo, value: bar, nonMergingList: [{name: a}, {name: b}]}"),
    Case("retainKeys map deletes nested non-merging list",
         original="retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}]}",
         current="retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}]}",
         modified="retainKeysMap: {name: foo, value: bar}",
         two_way="retainKeysMap: {$retainKeys: [name, value], value: bar, nonMergingList: null}",
         three_way="retainKeysMap: {$retainKeys: [name, value], value: bar, nonMergingList: null}",
         result="retainKeysMap: {name: foo, value: bar}"),
    Case("retainKeys map delete nested non-merging list with conflict",
         original="retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}]}",
         current="retainKeysMap: {name: foo, nonMergingList: [{name: a}, {name: b}, {name: c}]}",
         modified="retainKeysMap: {name: foo, value: bar}",
         two_way="retainKeysMap: {$retainKeys: [name, value], value: bar, nonMergingList: null}",
         three_way="retainKeysMap: {$retainKeys: [name, value], value: bar, nonMergingList: null}",
         result="retainKeysMap: {name: foo, value: bar}"),
    Case("retainKeys map nested merging int list with no change",
         original="retainKeysMap: {name: foo, mergingIntList: [1, 2]}",
         current="retainKeysMap: {name: foo, mergingIntList: [1, 2, 3]}",
         modified="retainKeysMap: {name: foo, value: bar, mergingIntList: [1, 2]}",
         two_way="retainKeysMap: {$retainKeys: [mergingIntList, name, value], value: bar}",
         three_way="""
           retainKeysMap:
             $retainKeys: [mergingIntList, name, value]
             $setElementOrder/mergingIntList: [1, 2]
             value: bar
         """,
         result="retainKeysMap: {name: foo, value: bar, mergingIntList: [1, 2, 3]}"),
    Case("retainKeys map adds an item in nested merging int list",
         original="retainKeysMap: {name: foo, mergingIntList: [1, 2]}",
         current="retainKeysMap: {name: foo, mergingIntList: [1, 2, 3]}",
         modified="retainKeysMap: {name: foo, mergingIntList: [1, 2, 4]}",
         two_way="""
           retainKeysMap:
             $setElementOrder/mergingIntList: [1, 2, 4]
             $retainKeys: [mergingIntList, name]
             mergingIntList: [4]
         """,
         three_way="""
           retainKeysMap:
             $setElementOrder/mergingIntList: [1, 2, 4]
             $retainKeys: [mergingIntList, name]
             mergingIntList: [4]
         """,
         result="retainKeysMap: {name: foo, mergingIntList: [1, 2, 4, 3]}"),
    Case("retainKeys map deletes an item in nested merging int list",
         original="retainKeysMap: {name: foo, mergingIntList: [1, 2, 3]}",
         current="retainKeysMap: {name: foo, mergingIntList: [1, 2, 3, 4]}",
         modified="retainKeysMap: {name: foo, mergingIntList: [1, 3]}",
         two_way="""
           retainKeysMap:
             $retainKeys: [mergingIntList, name]
             $deleteFromPrimitiveList/mergingIntList: [2]
             $setElementOrder/mergingIntList: [1, 3]
         """,
         three_way="""
           retainKeysMap:
             $retainKeys: [mergingIntList, name]
             $deleteFromPrimitiveList/mergingIntList: [2]
             $setElementOrder/mergingIntList: [1, 3]
         """,
         result="retainKeysMap: {name: foo, mergingIntList: [1, 3, 4]}"),
    Case("retainKeys map adds an item and deletes an item in nested merging int list",
         original="retainKeysMap: {name: foo, mergingIntList: [1, 2, 3]}",
         current="retainKeysMap: {name: foo, mergingIntList: [1, 2, 3, 4]}",
         modified="retainKeysMap: {name: foo, mergingIntList: [1, 3, 5]}",
         two_way="""
           retainKeysMap:
             $retainKeys: [mergingIntList, name]
             mergingIntList: [5]
             $deleteFromPrimitiveList/mergingIntList: [2]
             $setElementOrder/mergingIntList: [1, 3, 5]
         """,
         three_way="""
           retainKeysMap:
             $retainKeys: [mergingIntList, name]
             mergingIntList: [5]
             $deleteFromPrimitiveList/mergingIntList: [2]
             $setElementOrder/mergingIntList: [1, 3, 5]
         """,
         result="retainKeysMap: {name: foo, mergingIntList: [1, 3, 5, 4]}"),
    Case("retainKeys map deletes nested merging int list",
         original="retainKeysMap: {name: foo, mergingIntList: [1, 2, 3]}",
         current="retainKeysMap: {name: foo, mergingIntList: [1, 2, 3]}",
         modified="retainKeysMap: {name: foo}",
         two_way="retainKeysMap: {$retainKeys: [name], mergingIntList: null}",
         three_way="retainKeysMap: {$retainKeys: [name], mergingIntList: null}",
         result="retainKeysMap: {name: foo}"),
    Case("retainKeys map nested merging list with no change",
         original="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}]}",
         current="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}, {name: c}]}",
         modified="retainKeysMap: {name: foo, value: bar, mergingList: [{name: a}, {name: b}]}",
         two_way="retainKeysMap: {$retainKeys: [mergingList, name, value], value: bar}",
         three_way="""
           retainKeysMap:
             $retainKeys: [mergingList, name, value]
             $setElementOrder/mergingList: [{name: a}, {name: b}]
             value: bar
         """,
         result="retainKeysMap: {name: foo, value: bar, mergingList: [{name: a}, {name: b}, {name: c}]}"),
    Case("retainKeys map adds an item in nested merging list",
         original="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}]}",
         current="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}, {name: x}]}",
         modified="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}, {name: c}]}",
         two_way="""
           retainKeysMap:
             $retainKeys: [mergingList, name]
             $setElementOrder/mergingList: [{name: a}, {name: b}, {name: c}]
             mergingList: [{name: c}]
         """,
         three_way="""
           retainKeysMap:
             $retainKeys: [mergingList, name]
             $setElementOrder/mergingList: [{name: a}, {name: b}, {name: c}]
             mergingList: [{name: c}]
         """,
         result="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}, {name: c}, {name: x}]}"),
    Case("retainKeys map changes an item in nested merging list",
         original="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b, value: foo}]}",
         current="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b, value: foo}, {name: x}]}",
         modified="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b, value: bar}]}",
         two_way="""
           retainKeysMap:
             $retainKeys: [mergingList, name]
             $setElementOrder/mergingList: [{name: a}, {name: b}]
             mergingList: [{name: b, value: bar}]
         """,
         three_way="""
           retainKeysMap:
             $retainKeys: [mergingList, name]
             $setElementOrder/mergingList: [{name: a}, {name: b}]
             mergingList: [{name: b, value: bar}]
         """,
         result="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b, value: bar}, {name: x}]}"),
    Case("retainKeys map deletes nested merging list",
         original="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}]}",
         current="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}]}",
         modified="retainKeysMap: {name: foo, value: bar}",
         two_way="retainKeysMap: {$retainKeys: [name, value], value: bar, mergingList: null}",
         three_way="retainKeysMap: {$retainKeys: [name, value], value: bar, mergingList: null}",
         result="retainKeysMap: {name: foo, value: bar}"),
    Case("retainKeys map deletes an item in nested merging list",
         original="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}]}",
         current="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: b}, {name: x}]}",
         modified="retainKeysMap: {name: foo, mergingList: [{name: a}]}",
         two_way="""
           retainKeysMap:
             $retainKeys: [mergingList, name]
             $setElementOrder/mergingList: [{name: a}]
             mergingList: [{name: b, $patch: delete}]
         """,
         three_way="""
           retainKeysMap:
             $retainKeys: [mergingList, name]
             $setElementOrder/mergingList: [{name: a}]
             mergingList: [{name: b, $patch: delete}]
         """,
         result="retainKeysMap: {name: foo, mergingList: [{name: a}, {name: x}]}"),
    Case("retainKeys list of maps clears a field",
         original="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
         current="retainKeysMergingList: [{name: bar}, {name: foo, value: a, other: x}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
         two_way="{}",
         three_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo}]
         """,
         result="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]"),
    Case("retainKeys list of maps clears a field with conflict",
         original="retainKeysMergingList: [{name: bar}, {name: foo, value: old}]",
         current="retainKeysMergingList: [{name: bar}, {name: foo, value: new, other: x}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo, value: modified}]",
         two_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: modified}]
         """,
         three_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: modified}]
         """,
         result="retainKeysMergingList: [{name: bar}, {name: foo, value: modified}]"),
    Case("retainKeys list of maps changes a field and clear a field",
         original="retainKeysMergingList: [{name: bar}, {name: foo, value: old}]",
         current="retainKeysMergingList: [{name: bar}, {name: foo, value: old, other: x}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo, value: new}]",
         two_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: new}]
         """,
         three_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: new}]
         """,
         result="retainKeysMergingList: [{name: bar}, {name: foo, value: new}]"),
    Case("retainKeys list of maps changes a field and clear a field with conflict",
         original="retainKeysMergingList: [{name: bar}, {name: foo, value: old}]",
         current="retainKeysMergingList: [{name: bar}, {name: foo, value: modified, other: x}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo, value: new}]",
         two_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: new}]
         """,
         three_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: new}]
         """,
         result="retainKeysMergingList: [{name: bar}, {name: foo, value: new}]"),
    Case("retainKeys list of maps adds a field",
         original="retainKeysMergingList: [{name: bar}, {name: foo}]",
         current="retainKeysMergingList: [{name: bar}, {name: foo}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
         two_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: a}]
         """,
         three_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: a}]
         """,
         result="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]"),
    Case("retainKeys list of maps adds a field and clear a field",
         original="retainKeysMergingList: [{name: bar}, {name: foo}]",
         current="retainKeysMergingList: [{name: bar}, {name: foo, other: x}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
         two_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: a}]
         """,
         three_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name, value], name: foo, value: a}]
         """,
         result="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]"),
    Case("retainKeys list of maps deletes a field",
         original="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
         current="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo}]",
         two_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name], name: foo, value: null}]
         """,
         three_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name], name: foo, value: null}]
         """,
         result="retainKeysMergingList: [{name: bar}, {name: foo}]"),
    Case("retainKeys list of maps deletes a field and clear a field",
         original="retainKeysMergingList: [{name: bar}, {name: foo, value: a}]",
         current="retainKeysMergingList: [{name: bar}, {name: foo, value: a, other: x}]",
         modified="retainKeysMergingList: [{name: bar}, {name: foo}]",
         two_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name], name: foo, value: null}]
         """,
         three_way="""
           $setElementOrder/retainKeysMergingList: [{name: bar}, {name: foo}]
           retainKeysMergingList: [{$retainKeys: [name], name: foo, value: null}]
         """,
         result="retainKeysMergingList: [{name: bar}, {name: foo}]"),
    Case("delete and reorder in one list, reorder in another",
         original="""
           mergingList: [{name: a, value: a}, {name: b, value: b}]
           mergeItemPtr: [{name: c, value: c}, {name: d, value: d}]
         """,
         current="""
           mergingList: [{name: a, value: a}, {name: b, value: b}]
           mergeItemPtr: [{name: c, value: c}, {name: d, value: d}]
         """,
         modified="""
           mergingList: [{name: b, value: b}]
           mergeItemPtr: [{name: d, value: d}, {name: c, value: c}]
         """,
         two_way="""
           $setElementOrder/mergingList: [{name: b}]
           $setElementOrder/mergeItemPtr: [{name: d}, {name: c}]
           mergingList: [{$patch: delete, name: a}]
         """,
         three_way="""
           $setElementOrder/mergingList: [{name: b}]
           $setElementOrder/mergeItemPtr: [{name: d}, {name: c}]
           mergingList: [{$patch: delete, name: a}]
         """,
         result="""
           mergingList: [{name: b, value: b}]
           mergeItemPtr: [{name: d, value: d}, {name: c, value: c}]
         """),
]

# --- replaceRawExtensionPatchTestCases (TestReplaceWithRawExtension) ----------------------------

_OLD_ITEM = "replacingItem: {Some: Generic, Yaml: Inside, The: RawExtension, Field: Period}"
_NEW_ITEM = "replacingItem: {Newly: Modified, Yaml: Inside, The: RawExtension}"

RAW_EXTENSION = [
    Case("replace RawExtension field, rest unchanched",
         original=f"{{name: my-object, value: some-value, other: current-other, {_OLD_ITEM}}}",
         current=f"""
           {{name: my-object, value: some-value, other: current-other,
             mergingList: [{{name: 1}}, {{name: 2}}, {{name: 3}}], {_OLD_ITEM}}}
         """,
         modified=f"""
           {{name: my-object, value: some-value, other: current-other,
             mergingList: [{{name: 1}}, {{name: 2}}, {{name: 3}}], {_NEW_ITEM}}}
         """,
         two_way=f"{{mergingList: [{{name: 1}}, {{name: 2}}, {{name: 3}}], {_NEW_ITEM}}}",
         two_way_result=f"""
           {{name: my-object, value: some-value, other: current-other,
             mergingList: [{{name: 1}}, {{name: 2}}, {{name: 3}}], {_NEW_ITEM}}}
         """,
         three_way=f"{{{_NEW_ITEM}}}",
         result=f"""
           {{name: my-object, value: some-value, other: current-other,
             mergingList: [{{name: 1}}, {{name: 2}}, {{name: 3}}], {_NEW_ITEM}}}
         """),
    Case("replace RawExtension field and merge list",
         original=f"{{name: my-object, value: some-value, other: current-other, mergingList: [{{name: 1}}], {_OLD_ITEM}}}",
         current=f"""
           {{name: my-object, value: some-value, other: current-other,
             mergingList: [{{name: 1}}, {{name: 3}}], {_OLD_ITEM}}}
         """,
         modified=f"""
           {{name: my-object, value: some-value, other: current-other,
             mergingList: [{{name: 1}}, {{name: 2}}], {_NEW_ITEM}}}
         """,
         two_way=f"""
           {{$setElementOrder/mergingList: [{{name: 1}}, {{name: 2}}], mergingList: [{{name: 2}}], {_NEW_ITEM}}}
         """,
         two_way_result=f"""
           {{name: my-object, value: some-value, other: current-other,
             mergingList: [{{name: 1}}, {{name: 2}}], {_NEW_ITEM}}}
         """,
         three_way=f"""
           {{$setElementOrder/mergingList: [{{name: 1}}, {{name: 2}}], mergingList: [{{name: 2}}], {_NEW_ITEM}}}
         """,
         result=f"""
           {{name: my-object, value: some-value, other: current-other,
             mergingList: [{{name: 1}}, {{name: 2}}, {{name: 3}}], {_NEW_ITEM}}}
         """),
]


# --- the tests ------------------------------------------------------------------------------------


def _two_way_expected(c: Case) -> Any:
    return y(c.two_way_result if c.two_way_result is not None else c.modified)


def _apply_checked(original: Any, patch: Any) -> Any:
    original_before, patch_before = json.dumps(original), json.dumps(patch)
    out = smp(original, patch)
    assert json.dumps(original) == original_before and json.dumps(patch) == patch_before  # inputs untouched
    return out


@pytest.mark.parametrize("c", two_way(CUSTOM))
def test_custom_strategic_merge_patch(c: Case) -> None:
    """TestCustomStrategicMergePatch, YAML cases: compared after sortMergeListsByName, as upstream."""
    original = sort_merge_lists(y(c.original), MERGE_ITEM)
    patch = sort_merge_lists(y(c.two_way), MERGE_ITEM)
    assert _apply_checked(original, patch) == sort_merge_lists(_two_way_expected(c), MERGE_ITEM)


@pytest.mark.parametrize("c", two_way(CUSTOM_RAW))
def test_custom_strategic_merge_patch_raw(c: Case) -> None:
    """TestCustomStrategicMergePatch, raw cases (order matters; some must fail)."""
    if c.error is not None:
        with pytest.raises(PatchError) as info:
            smp(y(c.original), y(c.two_way))
        assert c.error in info.value.message
        return
    assert _apply_checked(y(c.original), y(c.two_way)) == _two_way_expected(c)


@pytest.mark.parametrize("c", two_way(CREATE))
def test_strategic_merge_patch_two_way(c: Case) -> None:
    """TestStrategicMergePatch, createStrategicMergePatchTestCaseData, two-way application."""
    original = sort_merge_lists(y(c.original), MERGE_ITEM)
    patch = sort_merge_lists(y(c.two_way), MERGE_ITEM)
    assert _apply_checked(original, patch) == sort_merge_lists(_two_way_expected(c), MERGE_ITEM)


@pytest.mark.parametrize("c", three_way(CREATE))
def test_strategic_merge_patch_three_way(c: Case) -> None:
    """TestStrategicMergePatch, createStrategicMergePatchTestCaseData, three-way application."""
    current = sort_merge_lists(y(c.current), MERGE_ITEM)
    patch = sort_merge_lists(y(c.three_way), MERGE_ITEM)
    assert _apply_checked(current, patch) == sort_merge_lists(y(c.result), MERGE_ITEM)


@pytest.mark.parametrize("c", two_way(RAW + RAW_EXTENSION))
def test_strategic_merge_patch_raw_two_way(c: Case) -> None:
    """TestStrategicMergePatch / TestReplaceWithRawExtension raw cases: original + twoWay."""
    assert _apply_checked(y(c.original), y(c.two_way)) == _two_way_expected(c)


@pytest.mark.parametrize("c", three_way(RAW + RAW_EXTENSION))
def test_strategic_merge_patch_raw_three_way(c: Case) -> None:
    """TestStrategicMergePatch / TestReplaceWithRawExtension raw cases: current + threeWay."""
    assert _apply_checked(y(c.current), y(c.three_way)) == y(c.result)


@pytest.mark.parametrize(
    ("original", "patch"),
    [
        pytest.param("<THIS IS NOT JSON>", {}, id="bad original"),
        pytest.param({}, "<THIS IS NOT JSON>", id="bad patch"),
    ],
)
def test_strategic_merge_patch_bad_documents(original: Any, patch: Any) -> None:
    """TestStrategicMergePatch: a document that is not a JSON object -> mergepatch.ErrBadJSONDoc (400)."""
    with pytest.raises(PatchError) as info:
        apply_strategic_merge_patch(original, patch, MERGE_ITEM)
    assert info.value.message == "invalid JSON document"
    assert info.value.code == 400


# TestNumberConversion: PrecisionItem has only scalar fields; the patch is upstream's expected one.
PRECISION_ITEM = PatchMeta(struct=True)


@pytest.mark.parametrize(
    ("old", "patch", "expected"),
    [
        pytest.param("{}", "{}", "{}", id="empty"),
        pytest.param('{"int32":1000000}', '{"name":"newname"}', '{"int32":1000000,"name":"newname"}',
                     id="int32 medium"),
        pytest.param('{"int32":2147483647}', '{"name":"newname"}', '{"int32":2147483647,"name":"newname"}',
                     id="int32 max"),
        pytest.param('{"int64":1000000}', '{"name":"newname"}', '{"int64":1000000,"name":"newname"}',
                     id="int64 medium"),
        pytest.param('{"int64":9223372036854775807}', '{"name":"newname"}',
                     '{"int64":9223372036854775807,"name":"newname"}', id="int64 max"),
        pytest.param('{"float32":3.4028234663852886e+38}', '{"name":"newname"}',
                     '{"float32":3.4028234663852886e+38,"name":"newname"}', id="float32 max"),
        pytest.param('{"float64":1.7976931348623157e+308}', '{"name":"newname"}',
                     '{"float64":1.7976931348623157e+308,"name":"newname"}', id="float64 max"),
    ],
)
def test_number_conversion(old: str, patch: str, expected: str) -> None:
    result = apply_strategic_merge_patch(json.loads(old), json.loads(patch), PRECISION_ITEM)
    assert json.dumps(result, sort_keys=True, separators=(",", ":")) == expected


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [
        pytest.param('{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}', "{}",
                     '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
                     id="no diff two-way"),
        pytest.param('{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}', "{}",
                     '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
                     id="no diff three-way"),
        pytest.param('{"name":"foo"}', '{"array":[1,2,3],"complex":{"nested":true},"scalar":true}',
                     '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
                     id="added only two-way"),
        pytest.param('{"name":"foo"}', '{"array":[1,2,3],"complex":{"nested":true},"scalar":true}',
                     '{"array":[1,2,3],"complex":{"nested":true},"name":"foo","scalar":true}',
                     id="added only three-way"),
        pytest.param('{"name":"foo","scalar":true,"complex":{"nested":true}}', '{"complex":null,"scalar":null}',
                     '{"name":"foo"}', id="removed only two-way"),
        pytest.param('{"name":"foo","scalar":true,"complex":{"nested":true},"array":[1,2,3]}',
                     '{"complex":null,"scalar":null}', '{"array":[1,2,3],"name":"foo"}',
                     id="removed only three-way"),
    ],
)
def test_unknown_field(original: str, patch: str, expected: str) -> None:
    """TestUnknownField: fields MergeItem does not declare are applied as plain JSON."""
    result = apply_strategic_merge_patch(json.loads(original), json.loads(patch), MERGE_ITEM)
    assert json.dumps(result, sort_keys=True, separators=(",", ":")) == expected


# --- jsonmergepatch: createJSONMergePatchTestCaseData, current + threeWay -> result ---------------

JSON_MERGE = [
    ("nil original", "{name: 1, other: a}", "{value: 1}", "{name: 1, value: 1, other: a}"),
    ("nil patch", "{name: 1}", "{}", "{name: 1}"),
    ("add field to map", "{name: 1, other: a}", "{value: 1}", "{name: 1, value: 1, other: a}"),
    ("add field to map with conflict", "{name: a, other: a}", "{name: 1, value: 1}",
     "{name: 1, value: 1, other: a}"),
    ("add field and delete field from map", "{name: 1, other: a}", "{name: null, value: 1}",
     "{value: 1, other: a}"),
    ("add field and delete field from map with conflict", "{name: a, other: a}", "{name: null, value: 1}",
     "{value: 1, other: a}"),
    ("delete field from nested map", "simpleMap: {key1: 1, key2: 1, other: a}", "simpleMap: {key2: null}",
     "simpleMap: {key1: 1, other: a}"),
    ("delete field from nested map with conflict", "simpleMap: {key1: a, key2: 1, other: a}",
     "simpleMap: {key1: 1, key2: null}", "simpleMap: {key1: 1, other: a}"),
    ("delete all fields from map", "{name: 1, value: 1, other: a}", "{name: null, value: null}", "{other: a}"),
    ("delete all fields from map with conflict", "{name: 1, value: a, other: a}", "{name: null, value: null}",
     "{other: a}"),
    ("add field and delete all fields from map", "{name: 1, value: 1, other: a}", "{name: null, value: null}",
     "{other: a}"),
    ("add field and delete all fields from map with conflict", "{name: 1, value: 1, other: b}",
     "{name: null, value: null, other: a}", "{other: a}"),
    ("replace list of scalars", "intList: [1, 2]", "intList: [2, 3]", "intList: [2, 3]"),
    ("replace list of scalars with conflict", "intList: [1, 4]", "intList: [2, 3]", "intList: [2, 3]"),
    ("patch with different scalar type", "{foo: 1, bar: 2}", "{foo: true}", "{foo: true, bar: 2}"),
    ("patch from scalar to list", "{foo: 0, bar: 2}", "{foo: [1, 2]}", "{foo: [1, 2], bar: 2}"),
    ("patch from list to scalar", "{foo: [1, 2], bar: 2}", "{foo: 0}", "{foo: 0, bar: 2}"),
    ("patch from scalar to map", "{foo: 0, bar: 2}", "{foo: {baz: 1}}", "{foo: {baz: 1}, bar: 2}"),
    ("patch from map to scalar", "{foo: {baz: 1}, bar: 2}", "{foo: 0}", "{foo: 0, bar: 2}"),
    ("patch from map to list", "{foo: {baz: 1}, bar: 2}", "{foo: [1, 2]}", "{foo: [1, 2], bar: 2}"),
    ("patch from list to map", "{foo: [1, 2], bar: 2}", "{foo: {baz: 0}}", "{foo: {baz: 0}, bar: 2}"),
    ("patch with different nested types", "{foo: [{a: true}, 2, false], bar: 0}", "{foo: [1, false, {b: 1}]}",
     "{foo: [1, false, {b: 1}], bar: 0}"),
]


@pytest.mark.parametrize(("current", "patch", "result"), [pytest.param(*c[1:], id=c[0]) for c in JSON_MERGE])
def test_json_merge_patch_three_way_application(current: str, patch: str, result: str) -> None:
    """jsonmergepatch TestCreateThreeWayJSONMergePatch, application half (jsonpatch.MergePatch)."""
    assert apply_merge_patch(y(current), y(patch)) == y(result)


# --- the same errors through the in-process API on a real kind ----------------------------------


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "busybox"}],
            "volumes": [{"name": "v", "emptyDir": {}}],
            "nodeSelector": {"disk": "ssd"},
        },
    }


@pytest.mark.parametrize(
    ("patch", "code", "message"),
    [
        pytest.param(
            {"spec": {"containers": [{"image": "x"}]}},
            500,
            "map: map[image:x] does not contain declared merge key: name",
            id="missing merge key is an unclassified error",
        ),
        pytest.param(
            {
                "spec": {
                    "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
                    "containers": [{"name": "b", "image": "b2"}, {"name": "a", "image": "a2"}],
                }
            },
            500,
            "The order in patch list:\n[map[image:b2 name:b] map[image:a2 name:a]]\n doesn't match "
            "$setElementOrder list:\n[map[name:a] map[name:b]]\n",
            id="setElementOrder not matching the patch list is an unclassified error",
        ),
        pytest.param(
            {"spec": {"volumes": [{"name": "v", "$retainKeys": ["name"], "secret": {"secretName": "s"}}]}},
            400,
            "invalid patch format of retainKeys",
            id="content outside retainKeys is ErrBadPatchFormatForRetainKeys",
        ),
        pytest.param(
            {"spec": {"$setElementOrder/containers": {"name": "a"}}},
            500,
            "expected a []interface {}, but received a map[string]interface {}",
            id="setElementOrder that is not a list is ErrBadArgType",
        ),
        pytest.param(
            {"spec": {"nodeSelector": {"$patch": "merge", "a": "b"}}},
            500,
            "unknown patch type: merge in map: map[$patch:merge a:b]",
            id="patch merge directive in a map is an unknown patch type",
        ),
    ],
)
async def test_patch_errors_through_the_api(core: ApiCore, patch: Any, code: int, message: str) -> None:
    """interpretStrategicMergePatchError: mergepatch's sentinel errors are 400 (or 422); any other
    SMP error reaches the client unclassified (HTTP 500, no reason, the Go error text)."""
    await core.create(PODS, "default", _pod(), WriteOptions())
    with pytest.raises(errors.ApiError) as info:
        await core.patch(PODS, "default", "p", "strategic", patch, WriteOptions())
    assert info.value.code == code
    assert info.value.message.endswith(message)


async def test_unclassified_patch_error_status_shape(core: ApiCore) -> None:
    """An SMP error outside mergepatch's sentinels is returned as-is by the PATCH handler, so
    ErrorToAPIStatus makes it a 500 Status with StatusReasonUnknown ("", omitted) and the bare
    Go error text (kubectl prints `Error from server: map: map[...] does not contain ...`)."""
    await core.create(PODS, "default", _pod(), WriteOptions())
    with pytest.raises(errors.ApiError) as info:
        await core.patch(PODS, "default", "p", "strategic", {"spec": {"containers": [{"image": "x"}]}},
                         WriteOptions())
    status = info.value.to_status()
    assert status["code"] == 500
    assert status["message"] == "map: map[image:x] does not contain declared merge key: name"
    assert "reason" not in status


@pytest.mark.parametrize(("with_order", "want"), [
    pytest.param(False, ["DisruptionTarget", "Initialized", "Ready"], id="bare-patch-puts-the-new-condition-first"),
    pytest.param(True, ["Initialized", "Ready", "DisruptionTarget"], id="setElementOrder-keeps-it-last"),
])
async def test_condition_status_patch_keeps_upstreams_condition_order(core: ApiCore, with_order: bool,
                                                                     want: list[str]) -> None:
    """PatchPodStatus (scheduler's PodScheduled, preemption's DisruptionTarget) sends a two-way
    patch with $setElementOrder/conditions, so a new condition lands after the existing ones;
    `condition_status_patch` builds that body (a bare keyed patch would put it first)."""
    await core.create(PODS, "default", _pod(), WriteOptions())
    await core.patch(PODS, "default", "p", "strategic", {"status": {"conditions": [
        {"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}]}}, WriteOptions(),
        subresource="status")
    pod = core.get(PODS, "default", "p")
    cond = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    body = condition_status_patch(pod, cond) if with_order else {"conditions": [cond]}
    await core.patch(PODS, "default", "p", "strategic", {"status": body}, WriteOptions(), subresource="status")
    got = core.get(PODS, "default", "p")["status"]["conditions"]
    assert [c["type"] for c in got] == want
