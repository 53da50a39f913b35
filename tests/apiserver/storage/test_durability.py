"""Every acknowledged write survives `kill -9` of the process that made it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from apiserver.storage.sqlite_store import SqliteStore

REPO_ROOT = Path(__file__).resolve().parents[3]

# The child writes from 16 coroutines as fast as it can and prints each key once its create has
# resolved (the store's acknowledgement), so everything the parent reads was acknowledged.
CHILD = r"""
import asyncio, sys
from apiserver.storage.sqlite_store import SqliteStore

async def main(path):
    store = SqliteStore(path, compact_interval=0)
    await store.start()
    counter = iter(range(10**9))
    async def worker():
        for i in counter:
            k = f"core/pods/default/p{i}"
            await store.create(k, {"metadata": {"name": f"p{i}"}, "spec": {"pad": "x" * 1500}})
            sys.stdout.write(k + "\n")
            sys.stdout.flush()
    await asyncio.gather(*(worker() for _ in range(16)))

asyncio.run(main(sys.argv[1]))
"""


def test_acknowledged_writes_survive_sigkill(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    acked: list[str] = []
    deadline = time.monotonic() + 60
    try:
        assert child.stdout is not None
        while len(acked) < 2000 and time.monotonic() < deadline:
            line = child.stdout.readline()
            if not line:
                break
            acked.append(line.strip())
        os.kill(child.pid, signal.SIGKILL)
        # Lines already in the pipe were acknowledged before the kill too.
        rest, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    acked.extend(line.strip() for line in rest.splitlines() if line.strip())
    assert child.returncode == -signal.SIGKILL, err
    assert len(acked) >= 2000, f"child stopped early: {err}"

    async def verify() -> None:
        store = SqliteStore(path, compact_interval=0)
        await store.start()
        try:
            missing = [k for k in acked if store.get(k) is None]
            assert not missing, f"{len(missing)} acknowledged writes lost, e.g. {missing[:3]}"
            assert store.revision >= len(acked)
            # Revision numbering continues after the crash.
            out = await store.create("core/pods/default/after", {"metadata": {"name": "after"}})
            assert out["metadata"]["resourceVersion"] == str(store.revision)
            assert store.revision == len(store.list("core/pods/")[0])
        finally:
            await store.close()

    asyncio.run(verify())
