"""Layer L4: the descheduler (sigs descheduler semantics: strategies choose *what* to evict,
one evictor decides *whether*, evictions go through the Eviction API).

| I want to... | Touch | Test at |
| add a descheduler strategy | `descheduler/plugins/<snake_name>.py` + `plugins/registry.py` | `tests/descheduler/plugins/` |

Data flow: informers -> `descheduler.Descheduler.run_once` (ready nodes -> every profile's
deschedule plugins -> every profile's balance plugins) -> `framework.profile.ProfileHandle.evict`
(preEvictionFilter) -> `evictions.PodEvictor` (limits, loop avoidance, `pods/eviction`, event,
metrics). Docs: docs/descheduler.md.
"""
