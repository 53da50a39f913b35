"""Test support (imports L1-L3 only, enforced by lint-imports; used by tests and by other
projects' test suites): builders for pods and nodes (`builders`), a real `minik3s server`
process on an ephemeral port (`server.ServerProcess`), its pytest fixtures (`pytest_plugin`)
and condition waits (`wait`).

Data flow: a test -> `ServerProcess` starts `python -m minik3s server` as a child process ->
the test talks to it over HTTP on 127.0.0.1 (kubectl, httpx, the `kubernetes` client) ->
`wait_for(condition)` instead of sleeps.
"""
