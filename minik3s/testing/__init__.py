"""Test support (imports L1-L3 only; used by tests and by other projects' test suites):
builders for pods and nodes, and a real `minik3s server` process on an ephemeral port."""
