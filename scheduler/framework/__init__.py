"""The scheduling framework (layer L4, part of `scheduler`; upstream pkg/scheduler/framework):
extension-point contracts and the immutable `Status` (interface.py), CycleState, NodeInfo and
PodInfo (types.py), the runtime that runs plugins per profile (runtime.py), waiting pods.

Data flow: `schedule_one` -> `Framework.run_*` for each extension point in order -> plugins
(read the cycle's snapshot, return a Status; None is a bug the runtime reports) -> the runtime
merges the verdicts and names the deciding plugin.

| I want to… | Touch | Test at |
|---|---|---|
| change how extension points run | `runtime.py` | `tests/scheduler/framework/test_runtime.py` |
"""
