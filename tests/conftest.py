pytest_plugins = ["minik3s.testing.pytest_plugin"]
