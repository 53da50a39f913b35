"""Storage: SQLite revision log + in-memory watch cache + broadcaster (layer L4, apiserver only).

Data flow: handler -> Store.create/update/delete -> single writer task (group commit, one
transaction per batch) -> COMMIT -> in-memory state + history ring -> watchers.

| I want to… | Touch | Test at |
| change watch or resourceVersion semantics | `apiserver/storage/` | `tests/apiserver/storage/` |

Modules: `interface` (the Store/Watcher contract and errors), `sqlite_store` (SqliteStore: writer,
reads, watch, compaction), `schema` (tables and SQL), `broadcaster` (prefix dispatch, bounded
watcher queues). The key index is a `sortedcontainers.SortedList`: `list(prefix)` and
`iter_after(prefix, key)` (a list page from its continue key) start by bisection.
"""
