"""Layer L2: wire types, the resources table, errors, quantities, selectors, request options
and pure helpers.

Shared by the apiserver (which renders errors as Status objects) and every client-side
component, so both ends agree on names, defaults and error shapes. Depends only on
minik3s.utils and third-party pydantic.
Data flow: a JSON dict from the wire or a component -> `resources` (which kind, which path) ->
models / `validation` (field-path causes) -> `errors` (Status <-> ApiError) back to the caller.

| I want to… | Touch | Test at |
|---|---|---|
| add an API kind or field | `minik3s/api/<group>.py` + `resources.py` (+ `apiserver/strategies/`) | `tests/api/`, `tests/apiserver/` |
| share logic between two components | `minik3s/api/helpers/` | `tests/api/` |
"""
