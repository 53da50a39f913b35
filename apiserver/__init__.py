"""Layer L4: the Kubernetes-compatible REST API server.

routes -> handlers -> strategies (defaults, validation, admission) -> storage
(SQLite revision log + watch cache + broadcaster). Shares only `minik3s.api` with clients.

| I want to… | Touch | Test at |
| add an API kind or field | `minik3s/api/*` + resources table + `apiserver/strategies/<kind>.py` | `tests/apiserver/` |
| change watch or resourceVersion semantics | `apiserver/storage/` | `tests/apiserver/storage/` |
"""
