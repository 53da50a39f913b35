"""Layer L4: the embedded kube-scheduler.

Event handlers route unassigned pods to the queue and assigned pods/nodes to the cache;
`schedule_one` pops a pod, snapshots the cache, runs the framework (PreFilter, Filter,
PostFilter, PreScore, Score, Reserve, Permit) and spawns the binding cycle
(WaitOnPermit, PreBind, Bind, PostBind) as a tracked task. Talks to the API only via
`minik3s.client`.

Data flow: pod/node informers -> eventhandlers -> queue + cache -> schedule_one -> framework
-> binding cycle -> `pods/binding` through the client (identity `kube-scheduler`).

| I want to… | Touch | Test at |
|---|---|---|
| add a scheduler plugin | `scheduler/plugins/<snake_name>.py` + `names.py` + `registry.py` | `tests/scheduler/plugins/test_<snake_name>.py` |
"""
