"""Layer L4: the Kubernetes-compatible REST API server.

app (factory) -> handlers (HTTP only) -> core (generic verbs) -> strategies (per-kind rules and
registry hooks) -> storage (SQLite revision log + watch cache + broadcaster). Leaf modules: keys
(typed AppKeys), openapi, reviews, rbac (the authorizer), protobuf, patch, crd. Shares only `minik3s.api` with clients;
the `apiserver layers` import-linter contract enforces the order.

| I want to… | Touch | Test at |
| add an API kind or field | `minik3s/api/*` + resources table + `apiserver/strategies/<kind>.py` | `tests/apiserver/` |
| change what a kind does on create/update/delete | its strategy's hooks (`strategies/base.py`) | `tests/apiserver/test_core_hooks.py` |
| change watch or resourceVersion semantics | `apiserver/storage/` | `tests/apiserver/storage/` |
| change how requests are authorized | `apiserver/rbac.py`, `handlers/authz.py` | `tests/apiserver/test_rbac*.py` |
"""
