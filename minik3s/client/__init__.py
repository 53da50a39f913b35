"""Layer L3: how components see and change the cluster.

`Client` (interface.py) with two transports of identical semantics: HTTP (rest.py, aiohttp)
and in-process (local.py, calls the apiserver's handler core without HTTP or JSON). Informers
(list + watch -> indexed local cache -> handlers), a shared informer factory, work queues.
Data flow: apiserver -> transport -> informer store -> component handlers -> work queue.
"""
