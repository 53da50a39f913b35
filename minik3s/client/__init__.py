"""Layer L3: how components see and change the cluster.

`Client` (interface.py) with two transports of identical semantics: HTTP (rest.py, aiohttp)
and in-process (local.py, calls the apiserver's request core without HTTP or JSON). Each client
carries its component's identity (user agent -> field manager, `default_user_agent`); both use
HTTP's `fieldValidation` default and report server warnings. Informers (list + watch -> indexed
local cache -> handlers), a shared informer factory, work queues; kubeconfig.py finds the
server and its credentials (CA, client certificate, bearer token: `ClusterAccess`) for
out-of-process clients.
Data flow: apiserver -> transport -> informer store -> component handlers -> work queue ->
component writes -> transport -> apiserver.

| I want to… | Touch | Test at |
|---|---|---|
| change what both transports do | `interface.py` + `rest.py` + `local.py` | `tests/minik3s/client/test_transport_parity.py` |
| change informer list/watch/relist | `informer.py`, `store.py` | `tests/minik3s/client/test_client_and_informer.py` |
| change how clients find the server or authenticate | `kubeconfig.py` (+ `rest.py`) | `tests/minik3s/client/test_kubeconfig.py`, `tests/e2e/test_tls.py` |
"""
