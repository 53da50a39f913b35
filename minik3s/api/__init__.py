"""Layer L2: wire types, the resources table, errors, quantities, selectors and pure helpers.

Shared by the apiserver (which renders errors as Status objects) and every client-side
component. Depends only on minik3s.utils and third-party pydantic.
"""
