"""The scheduler's state between cycles (layer L4, part of `scheduler`; upstream
pkg/scheduler/backend): `cache` (assigned and assumed pods per node, generation-numbered
NodeInfos), `snapshot` (the per-cycle, incrementally updated copy plugins read), `queue`
(activeQ / backoffQ / unschedulable pods with queueing hints) and `heap`.

Data flow: event handlers -> cache (pods, nodes) and queue (unassigned pods, wake-ups) ->
`schedule_one` pops from the queue and takes `cache.update_snapshot(snapshot)` -> the framework
runtime reads NodeInfos from the snapshot; assume/forget go back to the cache.
"""
