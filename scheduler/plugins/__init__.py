"""In-tree scheduler plugins (layer L4, part of `scheduler`): one module per upstream plugin.

Add a plugin: `scheduler/plugins/<snake_name>.py` + `names.py` + `registry.py`; test at
`tests/scheduler/plugins/test_<snake_name>.py`. Data flow: the framework runtime constructs each
plugin as `Plugin(args, handle)` from `registry.in_tree_registry()` and calls its extension points
with a CycleState, a PodInfo and NodeInfos from the cycle's snapshot.
"""
