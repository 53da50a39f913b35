"""Storage: SQLite revision log + in-memory watch cache + broadcaster (layer L4, apiserver only).

Data flow: handler -> Store.create/update/delete -> single writer task (group commit, one
transaction per batch) -> COMMIT -> in-memory state + history ring -> watchers.
"""
