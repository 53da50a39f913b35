"""Upstream pkg/scheduler/framework/runtime/framework_test.go (v1.33 era) ported onto our runtime.

Upstream registers one plugin object per case under a chosen name; here a case's plugin is a
class made for it (`injected(name, **injected)`), registered by name, and the Framework builds
it as it builds every plugin (`cls(args, handle)`). The score plugins take their injected results
from `pluginConfig` args as upstream (`{"scoreRes": 1}` ...). `newFrameworkWithQueueSortAndBind`
is `new_fw`: the no-op QueueSort and Bind plugins are added when the case names none.

Go's nil *Status is Success: a Go plugin returning `nil` returns `Status.success()` here (our
runtime calls a None status a plugin bug). Statuses compare as upstream's statusCmpOpts do:
Error by message only; otherwise code, plugin and message.

Cases beyond upstream's tables (ids starting "source:") pin behaviour read from upstream's
framework.go that the tables do not exercise.
"""

from __future__ import annotations

import asyncio
import re
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from minik3s.testing.builders import make_node, make_pod
from minik3s.utils.clock import FakeClock
from scheduler.backend.queue import Nominator, PriorityQueue
from scheduler.config import ConfigError, parse_config
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interface import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    Code,
    FilterPlugin,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScorePlugin,
    Status,
)
from scheduler.framework.runtime import (
    Framework,
    FrameworkError,
    PluginEntry,
    PluginSetSpec,
    ProfileSpec,
    _fmt_duration,
)
from scheduler.framework.types import NodeInfo, PodInfo
from scheduler.metrics import SchedulerMetrics
from scheduler.scheduler import Scheduler

PRE_ENQUEUE_PLUGIN = "preEnqueue-plugin"
QUEUE_SORT_PLUGIN = "no-op-queue-sort-plugin"
SCORE_WITH_NORMALIZE_1 = "score-with-normalize-plugin-1"
SCORE_WITH_NORMALIZE_2 = "score-with-normalize-plugin-2"
SCORE_PLUGIN_1 = "score-plugin-1"
SCORE_PLUGIN_2 = "score-plugin-2"
NOT_SCORE = "plugin-not-implementing-score"
PRE_FILTER_PLUGIN = "prefilter-plugin"
PRE_FILTER_WITH_EXTENSIONS = "prefilter-with-extensions-plugin"
DUPLICATE_PLUGIN = "duplicate-plugin"
TEST_PLUGIN = "test-plugin"
PERMIT_PLUGIN = "permit-plugin"
BIND_PLUGIN = "bind-plugin"
TEST_PROFILE = "test-profile"
NODE_NAME = "testNode"
INJECT_REASON = "injected status"
INJECT_FILTER_REASON = "injected filter status"

OK, ERR, UNSCH, UNRES, WAIT, SKIP = (Code.SUCCESS, Code.ERROR, Code.UNSCHEDULABLE,
                                      Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.WAIT, Code.SKIP)

# upstream's `pod = &v1.Pod{}` (only logged, or named in the Permit wait message)
POD = PodInfo({"metadata": {}, "spec": {}})


def status(code: Code, reason: str) -> Status:
    """upstream framework.NewStatus(code, reason)."""
    return Status(code, [reason])


# ---------------------------------------------------------------------------------------- plugins
class _Injected(Plugin):
    """upstream injectedResult: every extension point returns the injected code."""

    INJ: dict[str, Any] = {}

    def _st(self, key: str, reason: str = INJECT_REASON) -> Status:
        return status(Code(self.INJ.get(key, 0)), reason)


class TestPlugin(_Injected, QueueSortPlugin, PreFilterPlugin, FilterPlugin, PostFilterPlugin, PreScorePlugin,
                 ScorePlugin, ReservePlugin, PermitPlugin, PreBindPlugin, BindPlugin, PostBindPlugin):
    """upstream TestPlugin: implements every extension point except PreEnqueue."""

    __test__ = False
    NAME = TEST_PLUGIN

    def less(self, a: Any, b: Any) -> bool:
        return False

    def pre_filter(self, state, pod, nodes):
        return self.INJ.get("preFilterResult"), self._st("preFilterStatus")

    def has_pre_filter_extensions(self) -> bool:
        return True

    def add_pod(self, state, pod_to_schedule, pod_to_add, node):
        return self._st("preFilterAddPodStatus")

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node):
        return self._st("preFilterRemovePodStatus")

    def filter(self, state, pod, node):
        return self._st("filterStatus", INJECT_FILTER_REASON)

    async def post_filter(self, state, pod, filtered):
        return None, self._st("postFilterStatus")

    def pre_score(self, state, pod, nodes):
        return self._st("preScoreStatus")

    def score(self, state, pod, node):
        return 0, self._st("scoreStatus")

    def reserve(self, state, pod, node_name):
        return self._st("reserveStatus")

    def unreserve(self, state, pod, node_name):
        pass

    def permit(self, state, pod, node_name):
        return self._st("permitStatus"), 0.0

    async def pre_bind(self, state, pod, node_name):
        return self._st("preBindStatus")

    async def bind(self, state, pod, node_name):
        return self._st("bindStatus")

    async def post_bind(self, state, pod, node_name):
        pass


def injected(name: str, **inj: Any) -> type[TestPlugin]:
    """A TestPlugin registered as `name` with the injected results `inj` (upstream's field names)."""
    return type(f"TestPlugin_{name}", (TestPlugin,), {"NAME": name, "INJ": dict(inj)})


def _score_res(inj: dict[str, Any]) -> tuple[int, Status]:
    """upstream setScoreRes."""
    if inj.get("scoreStatus", 0):
        return 0, status(Code(inj["scoreStatus"]), "injecting failure.")
    return int(inj.get("scoreRes", 0)), Status.success()


class ScoreWithNormalize(ScorePlugin):
    """upstream TestScoreWithNormalizePlugin: results from its pluginConfig args."""

    def score(self, state, pod, node):
        return _score_res(self.args or {})

    def normalize_score(self, state, pod, scores):
        inj = self.args or {}
        if inj.get("normalizeStatus", 0):
            return status(Code(inj["normalizeStatus"]), "injecting failure.")
        for s in scores:
            s.score = int(inj.get("normalizeRes", 0))
        return Status.success()


class ScoreWithNormalize1(ScoreWithNormalize):
    NAME = SCORE_WITH_NORMALIZE_1


class ScoreWithNormalize2(ScoreWithNormalize):
    NAME = SCORE_WITH_NORMALIZE_2


class PlainScore(PreScorePlugin, ScorePlugin):
    """upstream TestScorePlugin: PreScore and Score, no NormalizeScore."""

    def pre_score(self, state, pod, nodes):
        return status(Code((self.args or {}).get("preScoreStatus", 0)), INJECT_REASON)

    def score(self, state, pod, node):
        return _score_res(self.args or {})


class ScorePlugin1(PlainScore):
    NAME = SCORE_PLUGIN_1


class ScorePlugin2(PlainScore):
    NAME = SCORE_PLUGIN_2


class NotScore(Plugin):
    NAME = NOT_SCORE


class DuplicatePlugin(PreFilterPlugin):
    NAME = DUPLICATE_PLUGIN

    def pre_filter(self, state, pod, nodes):
        return None, Status.success()


class NoopQueueSort(QueueSortPlugin):
    NAME = QUEUE_SORT_PLUGIN

    def less(self, a: Any, b: Any) -> bool:
        return False


class NoopBind(BindPlugin):
    NAME = BIND_PLUGIN

    async def bind(self, state, pod, node_name):
        return Status.success()


class PreEnqueueNoop(PreEnqueuePlugin):
    NAME = PRE_ENQUEUE_PLUGIN

    def pre_enqueue(self, pod):
        return Status.success()


CALLS: dict[str, int] = {}


class CountingPreFilter(PreFilterPlugin):
    """upstream TestPreFilterPlugin (no extensions)."""

    NAME = PRE_FILTER_PLUGIN

    def pre_filter(self, state, pod, nodes):
        CALLS[f"{self.NAME}.PreFilter"] = CALLS.get(f"{self.NAME}.PreFilter", 0) + 1
        return None, Status.success()


class CountingPreFilterWithExtensions(PreFilterPlugin):
    """upstream TestPreFilterWithExtensionsPlugin."""

    NAME = PRE_FILTER_WITH_EXTENSIONS

    def _count(self, what: str) -> Status:
        CALLS[f"{self.NAME}.{what}"] = CALLS.get(f"{self.NAME}.{what}", 0) + 1
        return Status.success()

    def pre_filter(self, state, pod, nodes):
        return None, self._count("PreFilter")

    def has_pre_filter_extensions(self) -> bool:
        return True

    def add_pod(self, state, pod_to_schedule, pod_to_add, node):
        return self._count("AddPod")

    def remove_pod(self, state, pod_to_schedule, pod_to_remove, node):
        return self._count("RemovePod")


class PermitWaits(PermitPlugin):
    """upstream TestPermitPlugin: Wait for 10s."""

    NAME = PERMIT_PLUGIN

    def permit(self, state, pod, node_name):
        return Status.wait(), 10.0


REGISTRY: dict[str, type[Plugin]] = {p.NAME: p for p in (
    ScoreWithNormalize1, ScoreWithNormalize2, ScorePlugin1, ScorePlugin2, NotScore, DuplicatePlugin,
    injected(TEST_PLUGIN), NoopQueueSort, NoopBind)}

DEFAULT_WEIGHTS = {SCORE_WITH_NORMALIZE_1: 1, SCORE_WITH_NORMALIZE_2: 2, SCORE_PLUGIN_1: 1}


# ---------------------------------------------------------------------------------------- helpers
Points = dict[str, list[tuple[str, int]] | tuple[list[tuple[str, int]], list[str]]]


def plugin_sets(points: Points) -> dict[str, PluginSetSpec]:
    """{"score": [(name, weight)...]} or {"score": (enabled, disabled names)} -> PluginSetSpecs."""
    out: dict[str, PluginSetSpec] = {}
    for ep, v in points.items():
        enabled, disabled = v if isinstance(v, tuple) else (v, [])
        out[ep] = PluginSetSpec([PluginEntry(n, w) for n, w in enabled], [PluginEntry(n) for n in disabled])
    return out


def score_config(*names: str) -> Points:
    """upstream buildScoreConfigDefaultWeights."""
    return {"score": [(n, DEFAULT_WEIGHTS.get(n, 0)) for n in names]}


def new_fw(registry: dict[str, type[Plugin]], points: Points | None, *, args: dict[str, Any] | None = None,
           name: str = "", **kw: Any) -> Framework:
    """upstream newFrameworkWithQueueSortAndBind: the no-op QueueSort and Bind plugins added
    when the profile names none."""
    reg = dict(registry)
    reg.setdefault(QUEUE_SORT_PLUGIN, NoopQueueSort)
    reg.setdefault(BIND_PLUGIN, NoopBind)
    sets = plugin_sets(points or {})
    for ep, default in (("queueSort", QUEUE_SORT_PLUGIN), ("bind", BIND_PLUGIN)):
        if not sets.get(ep, PluginSetSpec()).enabled:
            sets.setdefault(ep, PluginSetSpec()).enabled.append(PluginEntry(default))
    spec = ProfileSpec(scheduler_name=name, plugins=sets, plugin_args=args or {},
                       percentage_of_nodes_to_score=35 if name else None)
    return Framework(spec, reg, **kw)


def registry_of(*plugins: type[Plugin]) -> dict[str, type[Plugin]]:
    return {p.NAME: p for p in plugins}


def enabled(*plugins: type[Plugin]) -> list[tuple[str, int]]:
    return [(p.NAME, 0) for p in plugins]


def node(name: str) -> NodeInfo:
    return NodeInfo(make_node(name).obj())


NODES = [node("node1"), node("node2")]


def assert_status(got: Status | None, want: Status | None) -> None:
    """upstream statusCmpOpts: nil and Success are equal; an Error compares by its message;
    anything else by code, plugin and message."""
    if got is None or want is None or got.is_success() or want.is_success():
        assert (got is None or got.is_success()) and (want is None or want.is_success()), (got, want)
        return
    if want.code == Code.ERROR:
        assert (got.code, got.message()) == (Code.ERROR, want.message())
        return
    assert (got.code, got.plugin, got.message()) == (want.code, want.plugin, want.message())


def error(msg: str, plugin: str = "") -> Status:
    return Status.as_error(msg, plugin)


# ---------------------------------------------------------------------------------------- TestInitFrameworkWithScorePlugins
@pytest.mark.parametrize(("points", "init_err"), [
    pytest.param(score_config("notExist"), True, id="enabled Score plugin doesn't exist in registry"),
    pytest.param(score_config(NOT_SCORE), True, id="enabled Score plugin doesn't extend the ScorePlugin interface"),
    pytest.param({}, False, id="Score plugins are nil"),
    pytest.param(score_config(), False, id="enabled Score plugin list is empty"),
    pytest.param(score_config(SCORE_PLUGIN_1), False, id="enabled plugin only implements ScorePlugin interface"),
    pytest.param(score_config(SCORE_WITH_NORMALIZE_1), False,
                 id="enabled plugin implements ScoreWithNormalizePlugin interface"),
])
def test_init_framework_with_score_plugins(points, init_err):
    if init_err:
        with pytest.raises(FrameworkError):
            new_fw(REGISTRY, points)
    else:
        new_fw(REGISTRY, points)


# ---------------------------------------------------------------------------------------- TestNewFrameworkErrors
def test_new_framework_errors_duplicate_plugin_name():
    with pytest.raises(FrameworkError, match="already registered"):
        Framework(ProfileSpec(plugins=plugin_sets({"preFilter": [(DUPLICATE_PLUGIN, 1), (DUPLICATE_PLUGIN, 1)]}),
                              plugin_args={DUPLICATE_PLUGIN: {}}), REGISTRY)


def test_new_framework_errors_duplicate_plugin_config():
    """upstream: NewFramework's "repeated config for plugin". Our ProfileSpec keys args by plugin
    name, so a repeated pluginConfig can only come from the configuration, whose validation
    refuses it first, with upstream's validation message (field.Duplicate)."""
    with pytest.raises(ConfigError, match=r'profiles\[0\]\.pluginConfig\[1\]: Duplicate value: "duplicate-plugin"'):
        parse_config({"profiles": [{
            "plugins": {"preFilter": {"enabled": [{"name": DUPLICATE_PLUGIN, "weight": 1}]}},
            "pluginConfig": [{"name": DUPLICATE_PLUGIN}, {"name": DUPLICATE_PLUGIN}]}]})


# ---------------------------------------------------------------------------------------- TestNewFrameworkMultiPointExpansion
def _all_injected(score: list[tuple[str, int]], pre_score: list[str] | None = None) -> dict[str, list[str] | list]:
    want: dict[str, Any] = {ep: [(TEST_PLUGIN, 0)] for ep in (
        "queueSort", "preFilter", "filter", "postFilter", "reserve", "permit", "preBind", "bind", "postBind")}
    want["preScore"] = [(n, 0) for n in (pre_score if pre_score is not None else [TEST_PLUGIN])]
    want["score"] = score
    return {k: v for k, v in want.items() if v}


@pytest.mark.parametrize(("points", "want"), [
    pytest.param({"multiPoint": [(TEST_PLUGIN, 5)]}, _all_injected([(TEST_PLUGIN, 5)]), id="plugin expansion"),
    pytest.param({"multiPoint": [(TEST_PLUGIN, 0)], "preScore": ([], [TEST_PLUGIN]), "score": ([], [TEST_PLUGIN])},
                 _all_injected([], []), id="disable MultiPoint plugin at some extension points"),
    pytest.param({"multiPoint": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)]},
                 _all_injected([(TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1)], [TEST_PLUGIN, SCORE_PLUGIN_1]),
                 id="Multiple MultiPoint plugins"),
    pytest.param({"multiPoint": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)], "preScore": ([], ["*"])},
                 _all_injected([(TEST_PLUGIN, 1), (SCORE_PLUGIN_1, 1)], []), id="disable MultiPoint extension"),
    pytest.param({"multiPoint": [(SCORE_WITH_NORMALIZE_1, 0), (TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)],
                  "score": [(SCORE_PLUGIN_1, 0), (TEST_PLUGIN, 0)]},
                 _all_injected([(SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_1, 1)],
                                  [TEST_PLUGIN, SCORE_PLUGIN_1]),
                 id="Reorder MultiPoint plugins (specified extension takes precedence)"),
    pytest.param({"multiPoint": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)],
                  "score": [(SCORE_WITH_NORMALIZE_1, 0), (SCORE_PLUGIN_1, 0), (TEST_PLUGIN, 0)]},
                 _all_injected([(SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1), (SCORE_WITH_NORMALIZE_1, 1)],
                                  [TEST_PLUGIN, SCORE_PLUGIN_1]),
                 id="Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)"),
    pytest.param({"multiPoint": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)],
                  "score": [(SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3)]},
                 _all_injected([(SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3)], [TEST_PLUGIN, SCORE_PLUGIN_1]),
                 id="Override MultiPoint plugins weights"),
    pytest.param({"multiPoint": ([(QUEUE_SORT_PLUGIN, 0), (BIND_PLUGIN, 0), (SCORE_PLUGIN_1, 0)], ["*"])},
                 {"queueSort": [(QUEUE_SORT_PLUGIN, 0)], "preScore": [(SCORE_PLUGIN_1, 0)],
                  "score": [(SCORE_PLUGIN_1, 1)], "bind": [(BIND_PLUGIN, 0)]},
                 id="disable and enable MultiPoint plugins with '*'"),
    pytest.param({"multiPoint": ([(BIND_PLUGIN, 0), (QUEUE_SORT_PLUGIN, 0), (SCORE_PLUGIN_1, 0)], [SCORE_PLUGIN_1])},
                 {"queueSort": [(QUEUE_SORT_PLUGIN, 0)], "preScore": [(SCORE_PLUGIN_1, 0)],
                  "score": [(SCORE_PLUGIN_1, 1)], "bind": [(BIND_PLUGIN, 0)]},
                 id="disable and enable MultiPoint plugin by name"),
    pytest.param({"multiPoint": [(TEST_PLUGIN, 0), (TEST_PLUGIN, 0)]}, "already registered",
                 id="Expect 'already registered' error"),
    pytest.param({"multiPoint": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 0)],
                  "score": [(SCORE_PLUGIN_1, 5), (SCORE_PLUGIN_2, 5), (TEST_PLUGIN, 3)]},
                 _all_injected([(SCORE_PLUGIN_1, 5), (TEST_PLUGIN, 3), (SCORE_PLUGIN_2, 5)],
                                  [TEST_PLUGIN, SCORE_PLUGIN_1]),
                 id="Override MultiPoint plugins weights and avoid a plugin being loaded multiple times"),
    # source (getScoreWeights): a plugin listed at score without a weight gets 1, not its multiPoint weight
    pytest.param({"multiPoint": [(TEST_PLUGIN, 0), (SCORE_PLUGIN_1, 7)], "score": [(SCORE_PLUGIN_1, 0)]},
                 _all_injected([(SCORE_PLUGIN_1, 1), (TEST_PLUGIN, 1)], [TEST_PLUGIN, SCORE_PLUGIN_1]),
                 id="source: explicit Score entry without weight does not take the MultiPoint weight"),
])
def test_new_framework_multi_point_expansion(points, want):
    """Upstream calls NewFramework directly (no QueueSort/Bind added)."""
    spec = ProfileSpec(plugins=plugin_sets(points))
    if isinstance(want, str):
        with pytest.raises(FrameworkError, match=want):
            Framework(spec, REGISTRY)
        return
    f = Framework(spec, REGISTRY)
    got = {ep: [(e.name, e.weight) for e in entries] for ep, entries in f.list_plugins().items()}
    assert got == want
    # every extension point shares the one instance of a plugin
    assert len({id(p) for p in f.plugins.values()}) == len(f.plugins)


# ---------------------------------------------------------------------------------------- TestPreEnqueuePlugins
@pytest.mark.parametrize(("plugins", "want"), [
    pytest.param([], [], id="no PreEnqueuePlugin registered"),
    pytest.param([PreEnqueueNoop], [PRE_ENQUEUE_PLUGIN], id="one PreEnqueuePlugin registered"),
])
def test_pre_enqueue_plugins(plugins, want):
    f = new_fw(registry_of(*plugins), {"preEnqueue": enabled(*plugins)})
    assert [p.name() for p in f.pre_enqueue_plugins] == want
    assert f.run_pre_enqueue(make_pod("p").obj()).is_success()


# ---------------------------------------------------------------------------------------- TestRunPreScorePlugins
@pytest.mark.parametrize(("plugins", "want_skipped", "want_code"), [
    pytest.param([injected("success1"), injected("success2")], set(), OK,
                 id="all PreScorePlugins returned success"),
    pytest.param([injected("success"), injected("error", preScoreStatus=ERR)], set(), ERR,
                 id="one PreScore plugin returned success, but another PreScore plugin returned non-success"),
    pytest.param([injected("skip", preScoreStatus=SKIP), injected("error", preScoreStatus=ERR)], {"skip"}, ERR,
                 id="one PreScore plugin returned skip, but another PreScore plugin returned non-success"),
    pytest.param([injected(f"skip{i}", preScoreStatus=SKIP) for i in (1, 2, 3)], {"skip1", "skip2", "skip3"}, OK,
                 id="all PreScore plugins returned skip"),
    pytest.param([injected("skip1", preScoreStatus=SKIP), injected("success1"),
                  injected("skip2", preScoreStatus=SKIP), injected("success2")], {"skip1", "skip2"}, OK,
                 id="some PreScore plugins returned skip"),
])
def test_run_pre_score_plugins(plugins, want_skipped, want_code):
    f = new_fw(registry_of(*plugins), {"preScore": enabled(*plugins)})
    state = CycleState()
    st = f.run_pre_score(state, POD, [])
    assert st.code == want_code
    assert state.skip_score_plugins == want_skipped
    if want_code == ERR:  # source: "running PreScore plugin %q: %w"
        assert st.message() == f'running PreScore plugin "error": {INJECT_REASON}'


# ---------------------------------------------------------------------------------------- TestRunScorePlugins
@pytest.mark.parametrize(("points", "args", "skipped", "want"), [
    pytest.param(score_config(), {}, set(), ([], 0), id="no Score plugins"),
    pytest.param(score_config(SCORE_PLUGIN_1), {SCORE_PLUGIN_1: {"scoreRes": 1}}, set(),
                 ([(SCORE_PLUGIN_1, 1)], 1), id="single Score plugin"),
    pytest.param(score_config(SCORE_WITH_NORMALIZE_1), {SCORE_WITH_NORMALIZE_1: {"scoreRes": 10, "normalizeRes": 5}},
                 set(), ([(SCORE_WITH_NORMALIZE_1, 5)], 5), id="single ScoreWithNormalize plugin"),
    pytest.param(score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1, SCORE_WITH_NORMALIZE_2),
                 {SCORE_PLUGIN_1: {"scoreRes": 1}, SCORE_WITH_NORMALIZE_1: {"scoreRes": 3, "normalizeRes": 4},
                  SCORE_WITH_NORMALIZE_2: {"scoreRes": 4, "normalizeRes": 5}}, set(),
                 ([(SCORE_PLUGIN_1, 1), (SCORE_WITH_NORMALIZE_1, 4), (SCORE_WITH_NORMALIZE_2, 10)], 15),
                 id="3 Score plugins, 2 NormalizeScore plugins"),
    pytest.param(score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1), {SCORE_WITH_NORMALIZE_1: {"scoreStatus": 1}},
                 set(), f'running Score plugins: plugin "{SCORE_WITH_NORMALIZE_1}" failed with: injecting failure.',
                 id="score fails"),
    pytest.param(score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1),
                 {SCORE_WITH_NORMALIZE_1: {"normalizeStatus": 1}}, set(),
                 f'running Normalize on Score plugins: plugin "{SCORE_WITH_NORMALIZE_1}" failed with: '
                 "injecting failure.", id="normalize fails"),
    pytest.param(score_config(SCORE_PLUGIN_1), {SCORE_PLUGIN_1: {"scoreRes": MAX_NODE_SCORE + 1}}, set(),
                 f'applying score defaultWeights on Score plugins: plugin "{SCORE_PLUGIN_1}" returns an invalid '
                 "score 101, it should in the range of [0, 100] after normalizing",
                 id="Score plugin return score greater than MaxNodeScore"),
    pytest.param(score_config(SCORE_PLUGIN_1), {SCORE_PLUGIN_1: {"scoreRes": MIN_NODE_SCORE - 1}}, set(),
                 f'applying score defaultWeights on Score plugins: plugin "{SCORE_PLUGIN_1}" returns an invalid '
                 "score -1, it should in the range of [0, 100] after normalizing",
                 id="Score plugin return score less than MinNodeScore"),
    pytest.param(score_config(SCORE_WITH_NORMALIZE_1), {SCORE_WITH_NORMALIZE_1: {"normalizeRes": MAX_NODE_SCORE + 1}},
                 set(), f'applying score defaultWeights on Score plugins: plugin "{SCORE_WITH_NORMALIZE_1}" returns '
                 "an invalid score 101, it should in the range of [0, 100] after normalizing",
                 id="ScoreWithNormalize plugin return score greater than MaxNodeScore"),
    pytest.param(score_config(SCORE_WITH_NORMALIZE_1), {SCORE_WITH_NORMALIZE_1: {"normalizeRes": MIN_NODE_SCORE - 1}},
                 set(), f'applying score defaultWeights on Score plugins: plugin "{SCORE_WITH_NORMALIZE_1}" returns '
                 "an invalid score -1, it should in the range of [0, 100] after normalizing",
                 id="ScoreWithNormalize plugin return score less than MinNodeScore"),
    pytest.param({"multiPoint": [(SCORE_PLUGIN_1, 0)], "score": [(SCORE_PLUGIN_1, 3)]},
                 {SCORE_PLUGIN_1: {"scoreRes": 1}}, set(), ([(SCORE_PLUGIN_1, 3)], 3),
                 id="single Score plugin with MultiPointExpansion"),
    pytest.param(score_config(SCORE_PLUGIN_1, SCORE_WITH_NORMALIZE_1),
                 {SCORE_PLUGIN_1: {"scoreRes": 1}, SCORE_WITH_NORMALIZE_1: {"scoreStatus": 1}},
                 {SCORE_WITH_NORMALIZE_1}, ([(SCORE_PLUGIN_1, 1)], 1), id="one success plugin, one skip plugin"),
    pytest.param(score_config(SCORE_PLUGIN_1), {SCORE_PLUGIN_1: {"scoreStatus": 1}}, {SCORE_PLUGIN_1}, ([], 0),
                 id="all plugins are skipped in prescore"),
    pytest.param(score_config(SCORE_PLUGIN_1), {}, {SCORE_PLUGIN_1, "score-plugin-unknown"}, ([], 0),
                 id="skipped prescore plugin number greater than the number of score plugins"),
])
def test_run_score_plugins(points, args, skipped, want):
    f = new_fw(REGISTRY, points, args=args)
    state = CycleState()
    state.skip_score_plugins.update(skipped)
    rec: dict[str, Any] = {}
    totals, st = f.run_score(state, POD, NODES, record=rec)
    if isinstance(want, str):
        assert (st.code, st.message()) == (Code.ERROR, want)
        return
    assert st.is_success()
    plugin_scores, total = want
    # upstream NodePluginScores: per node, each plugin's weighted score, then the total
    got = [(n.name, [(name, int(r["normalized"][i]) * r["weight"]) for name, r in rec.items()], totals[i])
           for i, n in enumerate(NODES)]
    assert got == [(n.name, plugin_scores, total) for n in NODES]


# ---------------------------------------------------------------------------------------- TestPreFilterPlugins
def test_pre_filter_plugins():
    CALLS.clear()
    plugins = (CountingPreFilterWithExtensions, CountingPreFilter)
    f = new_fw(registry_of(*plugins), {"preFilter": enabled(*plugins)})
    state = CycleState()
    f.run_pre_filter(state, POD, [])
    f.run_pre_filter_extension_add_pod(state, POD, POD, node(NODE_NAME))
    f.run_pre_filter_extension_remove_pod(state, POD, POD, node(NODE_NAME))
    assert CALLS == {f"{PRE_FILTER_PLUGIN}.PreFilter": 1, f"{PRE_FILTER_WITH_EXTENSIONS}.PreFilter": 1,
                     f"{PRE_FILTER_WITH_EXTENSIONS}.AddPod": 1, f"{PRE_FILTER_WITH_EXTENSIONS}.RemovePod": 1}


# ---------------------------------------------------------------------------------------- TestRunPreFilterPlugins
def nodes_result(*names: str) -> PreFilterResult:
    return PreFilterResult(set(names))


@pytest.mark.parametrize(("plugins", "want_result", "want_skipped", "want_code", "want_msg"), [
    pytest.param([injected("success1"), injected("success2")], None, set(), OK, None,
                 id="all PreFilter returned success"),
    pytest.param([injected("success"), injected("error", preFilterStatus=ERR)], None, set(), ERR,
                 f'running PreFilter plugin "error": {INJECT_REASON}',
                 id="one PreFilter plugin returned success, but another PreFilter plugin returned non-success"),
    pytest.param([injected("skip", preFilterStatus=SKIP), injected("error", preFilterStatus=ERR)], None,
                 {"skip"}, ERR, None,
                 id="one PreFilter plugin returned skip, but another PreFilter plugin returned non-success"),
    pytest.param([injected(f"skip{i}", preFilterStatus=SKIP) for i in (1, 2, 3)], None, {"skip1", "skip2", "skip3"},
                 OK, None, id="all PreFilter plugins returned skip"),
    pytest.param([injected("skip1", preFilterStatus=SKIP), injected("success1"),
                  injected("skip2", preFilterStatus=SKIP), injected("success2")], None, {"skip1", "skip2"},
                 OK, None, id="some PreFilter plugins returned skip"),
    pytest.param([injected("unschedulable", preFilterStatus=UNSCH), injected("skip", preFilterStatus=SKIP)],
                 None, {"skip"}, UNSCH, None,
                 id="one PreFilter plugin returned Unschedulable, but another PreFilter plugin should be executed"),
    pytest.param([injected("unresolvable", preFilterStatus=UNRES), injected("skip", preFilterStatus=SKIP)],
                 None, set(), UNRES, None,
                 id="one PreFilter plugin returned UnschedulableAndUnresolvable, and all other plugins aren't executed"),
    pytest.param([injected("reject-all-nodes", preFilterResult=nodes_result()),
                  injected("skip", preFilterStatus=SKIP)], nodes_result(), set(), UNRES, None,
                 id="all nodes are filtered out by prefilter result, but other plugins aren't executed because we "
                    "consider all nodes are filtered out by UnschedulableAndUnresolvable"),
    # source (RunPreFilterPlugins): results merge by intersection; an empty one names the plugins sorted
    pytest.param([injected("b-narrow", preFilterResult=nodes_result("node1", "node2")),
                  injected("a-narrow", preFilterResult=nodes_result("node2", "node3"))],
                 nodes_result("node2"), set(), OK, None, id="source: PreFilterResults intersect"),
    pytest.param([injected("z-narrow", preFilterResult=nodes_result("node1")), injected("all-nodes"),
                  injected("a-narrow", preFilterResult=nodes_result("node2")),
                  injected("skip", preFilterStatus=SKIP)],
                 nodes_result(), set(), UNRES, "node(s) didn't satisfy plugin(s) [a-narrow z-narrow] simultaneously",
                 id="source: empty intersection names the narrowing plugins sorted"),
    pytest.param([injected("only", preFilterResult=nodes_result())], nodes_result(), set(), UNRES,
                 "node(s) didn't satisfy plugin only", id="source: one plugin leaving no node"),
    pytest.param([injected("first", preFilterStatus=UNSCH), injected("second", preFilterStatus=UNSCH)],
                 None, set(), UNSCH, None, id="source: the last Unschedulable is returned"),
    pytest.param([injected("pending", preFilterStatus=Code.PENDING)], None, set(), ERR,
                 f'running PreFilter plugin "pending": {INJECT_REASON}', id="source: Pending from PreFilter is an error"),
])
def test_run_pre_filter_plugins(plugins, want_result, want_skipped, want_code, want_msg):
    f = new_fw(registry_of(*plugins), {"preFilter": enabled(*plugins)})
    state = CycleState()
    result, st, _ = f.run_pre_filter(state, POD, [])
    assert result == want_result
    assert st.code == want_code
    assert state.skip_filter_plugins == want_skipped
    if want_msg is not None:
        assert st.message() == want_msg
    if want_code == UNRES and want_result is not None:
        assert st.plugin == ""  # upstream: NewStatus without a plugin
    if want_code == UNSCH:
        assert st.plugin == [p.NAME for p in plugins if p.INJ.get("preFilterStatus") == UNSCH][-1]


# ---------------------------------------------------------------------------------------- TestRunPreFilterExtensionRemovePod / AddPod
@pytest.mark.parametrize(("op", "plugins", "skipped", "want_code"), [
    param
    for op in ("RemovePod", "AddPod")
    for param in (
        pytest.param(op, ["success1", "success2"], set(), OK,
                     id=f"{op}: no plugins are skipped and all {op}() returned success"),
        pytest.param(op, ["success1", "error1"], set(), ERR, id=f"{op}: one {op}() returned error"),
        pytest.param(op, ["success1", "skipped"], {"skipped"}, OK, id=f"{op}: one {op}() is skipped"),
    )
])
def test_run_pre_filter_extension(op, plugins, skipped, want_code):
    key = "preFilterRemovePodStatus" if op == "RemovePod" else "preFilterAddPodStatus"
    classes = [injected(n, **({key: ERR} if n in ("error1", "skipped") else {})) for n in plugins]
    f = new_fw(registry_of(*classes), {"preFilter": enabled(*classes)})
    state = CycleState()
    state.skip_filter_plugins.update(skipped)
    run = f.run_pre_filter_extension_remove_pod if op == "RemovePod" else f.run_pre_filter_extension_add_pod
    st = run(state, POD, POD, node(NODE_NAME))
    assert st.code == want_code
    if want_code == ERR:
        assert st.message() == f'running {op} on PreFilter plugin "error1": {INJECT_REASON}'


# ---------------------------------------------------------------------------------------- TestFilterPlugins
def filter_error(plugin: str) -> Status:
    return error(f'running "{plugin}" filter plugin: {INJECT_FILTER_REASON}', plugin)


@pytest.mark.parametrize(("plugins", "skipped", "want"), [
    pytest.param([("TestPlugin", OK)], set(), None, id="SuccessFilter"),
    pytest.param([("TestPlugin", ERR)], set(), filter_error("TestPlugin"), id="ErrorFilter"),
    pytest.param([("TestPlugin", UNSCH)], set(), Status(UNSCH, [INJECT_FILTER_REASON], "TestPlugin"),
                 id="UnschedulableFilter"),
    pytest.param([("TestPlugin", UNRES)], set(), Status(UNRES, [INJECT_FILTER_REASON], "TestPlugin"),
                 id="UnschedulableAndUnresolvableFilter"),
    pytest.param([("TestPlugin1", ERR), ("TestPlugin2", ERR)], set(), filter_error("TestPlugin1"),
                 id="ErrorAndErrorFilters"),
    pytest.param([("TestPlugin1", UNSCH), ("TestPlugin2", UNSCH)], set(),
                 Status(UNSCH, [INJECT_FILTER_REASON], "TestPlugin1"), id="UnschedulableAndUnschedulableFilters"),
    pytest.param([("TestPlugin1", UNRES), ("TestPlugin2", UNSCH)], set(),
                 Status(UNRES, [INJECT_FILTER_REASON], "TestPlugin1"),
                 id="UnschedulableAndUnschedulableAndUnresolvableFilters"),
    pytest.param([("TestPlugin1", OK), ("TestPlugin2", OK)], set(), None, id="SuccessAndSuccessFilters"),
    pytest.param([("TestPlugin1", OK), ("TestPlugin2", ERR)], {"TestPlugin2"}, None, id="SuccessAndSkipFilters"),
    pytest.param([("TestPlugin1", ERR), ("TestPlugin2", OK)], set(), filter_error("TestPlugin1"),
                 id="ErrorAndSuccessFilters"),
    pytest.param([("TestPlugin1", OK), ("TestPlugin2", ERR)], set(), filter_error("TestPlugin2"),
                 id="SuccessAndErrorFilters"),
    pytest.param([("TestPlugin1", OK), ("TestPlugin2", UNSCH)], set(),
                 Status(UNSCH, [INJECT_FILTER_REASON], "TestPlugin2"), id="SuccessAndUnschedulableFilters"),
])
def test_filter_plugins(plugins, skipped, want):
    classes = [injected(n, filterStatus=c) for n, c in plugins]
    f = new_fw(registry_of(*classes), {"filter": enabled(*classes)})
    state = CycleState()
    state.skip_filter_plugins.update(skipped)
    got = f.run_filter(state, POD, node(NODE_NAME))
    assert_status(got, want)
    if want is not None:  # our Error names its plugin too (upstream SetPlugin on every failure)
        assert got is not None and got.plugin == want.plugin


# ---------------------------------------------------------------------------------------- TestPostFilterPlugins
@pytest.mark.parametrize(("plugins", "want"), [
    pytest.param([("TestPlugin", OK)], status(OK, INJECT_REASON), id="a single plugin makes a Pod schedulable"),
    pytest.param([("TestPlugin1", UNSCH), ("TestPlugin2", OK)], status(OK, INJECT_REASON),
                 id="plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod schedulable"),
    pytest.param([("TestPlugin1", OK), ("TestPlugin2", UNSCH)], status(OK, INJECT_REASON),
                 id="plugin1 makes a Pod schedulable, followed by plugin2 which cannot make the Pod schedulable"),
    pytest.param([("TestPlugin1", ERR), ("TestPlugin2", OK)], error(INJECT_REASON, "TestPlugin1"),
                 id="plugin1 errors, followed by plugin2 which makes the Pod schedulable"),
    pytest.param([("TestPlugin1", UNSCH), ("TestPlugin2", UNRES)], Status(UNRES, [INJECT_REASON], "TestPlugin2"),
                 id="plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod unresolvable"),
    pytest.param([("TestPlugin1", UNSCH), ("TestPlugin2", UNSCH)],
                 Status(UNSCH, [INJECT_REASON, INJECT_REASON], "TestPlugin1"),
                 id="both plugins failed to make a Pod schedulable"),
])
async def test_post_filter_plugins(plugins, want):
    classes = [injected(n, postFilterStatus=c) for n, c in plugins]
    f = new_fw(registry_of(*classes), {"postFilter": enabled(*classes)})
    _, got = await f.run_post_filter(CycleState(), POD, {})
    assert_status(got, want)
    assert got.plugin == want.plugin or want.is_success()


# ---------------------------------------------------------------------------------------- TestFilterPluginsWithNominatedPods
LOW = PodInfo(make_pod("low").uid("low").priority(0).obj())
HIGH = PodInfo(make_pod("high").uid("high").priority(1000).obj())


@pytest.mark.parametrize(("pre_filter", "filter_", "pod", "nominated", "want"), [
    pytest.param(None, None, LOW, None, None, id="node has no nominated pod"),
    pytest.param(("TestPlugin1", OK), ("TestPlugin2", OK), LOW, HIGH, None,
                 id="node has a high-priority nominated pod and all filters succeed"),
    pytest.param(("TestPlugin1", ERR), None, LOW, HIGH,
                 error(f'running AddPod on PreFilter plugin "TestPlugin1": {INJECT_REASON}'),
                 id="node has a high-priority nominated pod and pre filters fail"),
    pytest.param(("TestPlugin1", OK), ("TestPlugin2", ERR), LOW, HIGH, filter_error("TestPlugin2"),
                 id="node has a high-priority nominated pod and filters fail"),
    pytest.param(("TestPlugin1", UNSCH), ("TestPlugin2", OK), HIGH, LOW, None,
                 id="node has a low-priority nominated pod and pre filters return unschedulable"),
])
def test_filter_plugins_with_nominated_pods(pre_filter, filter_, pod, nominated, want):
    classes: list[type[Plugin]] = []
    points: Points = {}
    if pre_filter is not None:
        classes.append(injected(pre_filter[0], preFilterAddPodStatus=pre_filter[1]))
        points["preFilter"] = enabled(classes[-1])
    if filter_ is not None:
        classes.append(injected(filter_[0], filterStatus=filter_[1]))
        points["filter"] = enabled(classes[-1])
    nominator = Nominator()  # the queue's nominator, as upstream's NewSchedulingQueue
    if nominated is not None:
        nominator.add(nominated, NODE_NAME)
    f = new_fw(registry_of(*classes), points, nominator=nominator)
    ni = node(NODE_NAME)
    ni.add_pod(PodInfo(make_pod("existing").uid("existing").node(NODE_NAME).obj()))
    got = f.run_filter_with_nominated_pods(CycleState(), pod, ni)
    assert_status(got, want)
    assert [p.name for p in ni.pods] == ["existing"]  # the nominated pod went into a copy


# ---------------------------------------------------------------------------------------- TestPreBindPlugins / TestReservePlugins
def _two_point_cases(label: str, running: str) -> list[Any]:
    def err(plugin: str) -> Status:
        return error(f'running {running} plugin "{plugin}": {INJECT_REASON}')

    return [
        pytest.param([], None, id=f"No{label}Plugin"),
        pytest.param([("TestPlugin", OK)], None, id=f"Success{label}Plugins"),
        pytest.param([("TestPlugin", UNSCH)], Status(UNSCH, [INJECT_REASON], "TestPlugin"),
                     id=f"Unschedulable{label}Plugin"),
        pytest.param([("TestPlugin", ERR)], err("TestPlugin"), id=f"Error{label}Plugin"),
        pytest.param([("TestPlugin", UNRES)], Status(UNRES, [INJECT_REASON], "TestPlugin"),
                     id=f"UnschedulableAndUnresolvable{label}Plugin"),
        pytest.param([("TestPlugin", OK), ("TestPlugin 1", ERR)], err("TestPlugin 1"), id=f"SuccessError{label}Plugins"),
        pytest.param([("TestPlugin", ERR), ("TestPlugin 1", OK)], err("TestPlugin"), id=f"ErrorSuccess{label}Plugin"),
        pytest.param([("TestPlugin", OK), ("TestPlugin 1", OK)], None, id=f"SuccessSuccess{label}Plugin"),
        pytest.param([("TestPlugin", ERR), ("TestPlugin 1", ERR)], err("TestPlugin"), id=f"ErrorAndError{label}Plugins"),
        pytest.param([("TestPlugin", UNSCH), ("TestPlugin 1", OK)], Status(UNSCH, [INJECT_REASON], "TestPlugin"),
                     id=f"UnschedulableAndSuccess{label}Plugin"),
    ]


@pytest.mark.parametrize(("plugins", "want"), _two_point_cases("PreBind", "PreBind"))
async def test_pre_bind_plugins(plugins, want):
    classes = [injected(n, preBindStatus=c) for n, c in plugins]
    f = new_fw(registry_of(*classes), {"preBind": enabled(*classes)})
    assert_status(await f.run_pre_bind(CycleState(), POD, ""), want)


@pytest.mark.parametrize(("plugins", "want"), _two_point_cases("Reserve", "Reserve"))
def test_reserve_plugins(plugins, want):
    classes = [injected(n, reserveStatus=c) for n, c in plugins]
    f = new_fw(registry_of(*classes), {"reserve": enabled(*classes)})
    assert_status(f.run_reserve(CycleState(), POD, ""), want)


# ---------------------------------------------------------------------------------------- TestPermitPlugins
@pytest.mark.parametrize(("plugins", "want"), [
    pytest.param([], None, id="NilPermitPlugin"),
    pytest.param([("TestPlugin", OK)], None, id="SuccessPermitPlugin"),
    pytest.param([("TestPlugin", UNSCH)], Status(UNSCH, [INJECT_REASON], "TestPlugin"), id="UnschedulablePermitPlugin"),
    pytest.param([("TestPlugin", ERR)], error(f'running Permit plugin "TestPlugin": {INJECT_REASON}', "TestPlugin"),
                 id="ErrorPermitPlugin"),
    pytest.param([("TestPlugin", UNRES)], Status(UNRES, [INJECT_REASON], "TestPlugin"),
                 id="UnschedulableAndUnresolvablePermitPlugin"),
    pytest.param([("TestPlugin", WAIT)],
                 Status(WAIT, ['one or more plugins asked to wait and no plugin rejected pod ""']), id="WaitPermitPlugin"),
    pytest.param([("TestPlugin", OK), ("TestPlugin 1", OK)], None, id="SuccessSuccessPermitPlugin"),
    pytest.param([("TestPlugin", ERR), ("TestPlugin 1", ERR)],
                 error(f'running Permit plugin "TestPlugin": {INJECT_REASON}', "TestPlugin"), id="ErrorAndErrorPlugins"),
])
async def test_permit_plugins(plugins, want):
    classes = [injected(n, permitStatus=c) for n, c in plugins]
    f = new_fw(registry_of(*classes), {"permit": enabled(*classes)}, clock=FakeClock())
    try:
        got = f.run_permit(CycleState(), POD, "")
        assert_status(got, want)
        if want is not None and want.code == ERR:
            assert got.plugin == want.plugin
    finally:
        f.close()


# ---------------------------------------------------------------------------------------- TestRecordingMetrics / TestRunBindPlugins
EXTENSION_POINT_COUNT = "scheduler_framework_extension_point_duration_seconds_count"


def instrumented(f: Framework) -> CollectorRegistry:
    """The scheduler's metrics hooked on `f` as the scheduler hooks its profiles (a real queue)."""
    registry = CollectorRegistry()
    SchedulerMetrics(registry).attach(SimpleNamespace(queue=PriorityQueue({f.profile_name: f}),
                                                      frameworks={f.profile_name: f}))
    return registry


def extension_point_count(registry: CollectorRegistry, ep: str, code: str) -> float:
    return registry.get_sample_value(EXTENSION_POINT_COUNT,
                                     {"extension_point": ep, "status": code, "profile": TEST_PROFILE}) or 0.0


async def _action(f: Framework, ep: str) -> None:
    state = CycleState()
    if ep == "PreFilter":
        f.run_pre_filter(state, POD, [])
    elif ep == "PreScore":
        f.run_pre_score(state, POD, [])
    elif ep == "Score":
        f.run_score(state, POD, NODES)
    elif ep == "Reserve":
        f.run_reserve(state, POD, "")
    elif ep == "Unreserve":
        f.run_unreserve(state, POD, "")
    elif ep == "PreBind":
        await f.run_pre_bind(state, POD, "")
    elif ep == "Bind":
        await f.run_bind(state, POD, "")
    elif ep == "PostBind":
        await f.run_post_bind(state, POD, "")
    elif ep == "Permit":
        f.run_permit(state, POD, "")


@pytest.mark.parametrize(("ep", "inject", "want"), [
    *[pytest.param(ep, {}, "Success", id=f"{ep} - Success") for ep in (
        "PreFilter", "PreScore", "Score", "Reserve", "Unreserve", "PreBind", "Bind", "PostBind", "Permit")],
    *[pytest.param(ep, {key: ERR}, "Error", id=f"{ep} - Error") for ep, key in (
        ("PreFilter", "preFilterStatus"), ("PreScore", "preScoreStatus"), ("Score", "scoreStatus"),
        ("Reserve", "reserveStatus"), ("PreBind", "preBindStatus"), ("Bind", "bindStatus"),
        ("Permit", "permitStatus"))],
    pytest.param("Permit", {"permitStatus": WAIT}, "Wait", id="Permit - Wait"),
])
async def test_recording_metrics(ep, inject, want):
    """The framework half (scheduler_framework_extension_point_duration_seconds, one sample);
    the per-plugin scheduler_plugin_execution_duration_seconds half is not served by minik3s."""
    pl = injected(TEST_PLUGIN, **inject)
    points: Points = {p: [(TEST_PLUGIN, 1)] for p in (
        "score", "preFilter", "filter", "preScore", "reserve", "permit", "preBind", "bind", "postBind")}
    f = new_fw(registry_of(pl), points, name=TEST_PROFILE, clock=FakeClock())
    registry = instrumented(f)
    try:
        await _action(f, ep)
        assert extension_point_count(registry, ep, want) == 1
    finally:
        f.close()


@pytest.mark.parametrize(("injects", "want"), [
    pytest.param([OK], OK, id="simple success"),
    pytest.param([SKIP, ERR, OK], ERR, id="error on second"),
    pytest.param([SKIP, SKIP, SKIP], SKIP, id="all skip"),
    pytest.param([SKIP, OK, ERR], OK, id="error on third, but not reached"),
    pytest.param([], OK, id="no bind plugin, returns default binder"),
    pytest.param([UNSCH], UNSCH, id="invalid status"),
    pytest.param([ERR], ERR, id="simple error"),
    pytest.param([SKIP, OK], OK, id="success on second, returns success"),
    pytest.param([SKIP, UNRES], UNRES, id="invalid status, returns error"),
    pytest.param([OK, ERR], OK, id="error after success status, returns success"),
    pytest.param([OK, ERR], OK, id="success before invalid status, returns success"),
    pytest.param([ERR, OK], ERR, id="success after error status, returns error"),
])
async def test_run_bind_plugins(injects, want):
    classes = [injected(f"bind-{i}", bindStatus=c) for i, c in enumerate(injects)]
    f = new_fw(registry_of(*classes), {"bind": enabled(*classes)}, name=TEST_PROFILE)
    registry = instrumented(f)
    st = await f.run_bind(CycleState(), POD, "")
    assert st.code == want
    names = {OK: "Success", ERR: "Error", SKIP: "Skip", UNSCH: "Unschedulable", UNRES: "UnschedulableAndUnresolvable"}
    assert extension_point_count(registry, "Bind", names[want]) == 1


# ---------------------------------------------------------------------------------------- TestPermitWaitDurationMetric
PERMIT_WAIT_COUNT = "scheduler_permit_wait_duration_seconds_count"


@pytest.mark.parametrize(("inject", "want_res"), [
    pytest.param({}, "", id="WaitOnPermit - No Wait"),
    pytest.param({"permitStatus": WAIT}, "Unschedulable", id="WaitOnPermit - Wait Timeout"),
])
async def test_permit_wait_duration_metric(inject, want_res):
    pl = injected(TEST_PLUGIN, **inject)
    f = new_fw(registry_of(pl), {"permit": [(TEST_PLUGIN, 1)]}, name=TEST_PROFILE)
    registry = instrumented(f)
    try:
        f.run_permit(CycleState(), POD, "")
        st = await asyncio.wait_for(f.wait_on_permit(POD), 5)
        if want_res:  # the 0s timeout the plugin asked for rejects at once
            assert (st.code, st.plugin, st.message()) == (
                UNSCH, TEST_PLUGIN, f"rejected due to timeout after waiting 0s at plugin {TEST_PLUGIN}")
        counts = {r: registry.get_sample_value(PERMIT_WAIT_COUNT, {"result": r}) or 0.0
                  for r in ("Success", "Unschedulable")}
        assert counts == {r: (1.0 if r == want_res else 0.0) for r in counts}
    finally:
        f.close()


# ---------------------------------------------------------------------------------------- TestWaitOnPermit
WAITING_POD = PodInfo(make_pod("pod").uid("pod").obj())


@pytest.mark.parametrize(("action", "want"), [
    pytest.param("reject", Status(UNSCH, ["reject message"], PERMIT_PLUGIN), id="Reject Waiting Pod"),
    pytest.param("allow", None, id="Allow Waiting Pod"),
])
async def test_wait_on_permit(action, want):
    f = new_fw(registry_of(PermitWaits), {"permit": [(PERMIT_PLUGIN, 1)]}, clock=FakeClock())
    try:
        st = f.run_permit(CycleState(), WAITING_POD, "")
        assert st.code == WAIT
        assert st.message() == 'one or more plugins asked to wait and no plugin rejected pod "pod"'

        async def act() -> None:
            wp = f.get_waiting_pod(WAITING_POD.uid)
            if action == "reject":
                wp.reject(PERMIT_PLUGIN, "reject message")
            else:
                wp.allow(PERMIT_PLUGIN)

        task = asyncio.create_task(act())
        got = await asyncio.wait_for(f.wait_on_permit(WAITING_POD), 5)
        await task
        assert_status(got, want)
        assert f.get_waiting_pod(WAITING_POD.uid) is None
    finally:
        f.close()


# ---------------------------------------------------------------------------------------- TestListPlugins
@pytest.mark.parametrize(("points", "want"), [
    pytest.param({}, {"queueSort": [(QUEUE_SORT_PLUGIN, 0)], "bind": [(BIND_PLUGIN, 0)]}, id="Add empty plugin"),
    pytest.param({"score": [(SCORE_PLUGIN_1, 3), (SCORE_WITH_NORMALIZE_1, 0)]},
                 {"queueSort": [(QUEUE_SORT_PLUGIN, 0)], "bind": [(BIND_PLUGIN, 0)],
                  "score": [(SCORE_PLUGIN_1, 3), (SCORE_WITH_NORMALIZE_1, 1)]}, id="Add multiple plugins"),
])
def test_list_plugins(points, want):
    f = new_fw(REGISTRY, points)
    assert {ep: [(e.name, e.weight) for e in es] for ep, es in f.list_plugins().items()} == want


# ---------------------------------------------------------------------------------------- NewFramework's profile checks (source)
@pytest.mark.parametrize(("plugins", "want"), [
    pytest.param({"bind": {"enabled": [{"name": "DefaultBinder"}]}},
                 'only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0',
                 id="source: no queue sort plugin"),
    pytest.param({"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
                 'at least one bind plugin is needed for profile with scheduler name "default-scheduler"',
                 id="source: no bind plugin"),
])
def test_source_profile_needs_queue_sort_and_bind(plugins, want):
    """Upstream NewFramework refuses a profile without exactly one QueueSort plugin or without a
    Bind plugin; the scheduler checks its profiles the same way (a bare Framework, as these
    tables build, does not)."""
    cfg = parse_config({"profiles": [{"schedulerName": "default-scheduler",
                                      "plugins": {"multiPoint": {"disabled": [{"name": "*"}]}, **plugins}}]})
    with pytest.raises(ConfigError, match=re.escape(want)):
        Scheduler(cfg, client=None, informers=None, clock=FakeClock())


@pytest.mark.parametrize(("seconds", "want"), [
    (0, "0s"), (0.0000005, "500ns"), (0.0000015, "1.5µs"), (0.5, "500ms"), (0.0015, "1.5ms"), (1, "1s"),
    (2.5, "2.5s"), (10, "10s"), (60, "1m0s"), (90, "1m30s"), (900, "15m0s"), (3600, "1h0m0s"),
    (3661.25, "1h1m1.25s"),
])
def test_source_permit_timeout_is_written_as_go_duration(seconds, want):
    """The Permit timeout message prints the wait as Go's time.Duration String()."""
    assert _fmt_duration(seconds) == want
