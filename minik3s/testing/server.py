"""Start a real `minik3s server` process for tests, on an ephemeral loopback port.

The process is the same entry point users run (`python -m minik3s server`), so tests exercise
the real thing. The URL is read from the server's ready line on stdout; stderr goes to
`<data_dir>/server.log` for post-mortems. `tls=True` starts it with `--tls` (HTTPS, every
request authenticated); `kubeconfig` then carries the CA and the admin's client certificate,
and `ca_path`/`admin_cert` name the generated files for other clients (httpx, curl).

    with ServerProcess(tmp_path, nodes="0") as srv:
        httpx.get(srv.url + "/readyz")
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType


class ServerProcess:
    # `--unsafe-no-fsync` for every server this process starts unless `fsync=` says otherwise
    # (a test suite's conftest sets it: its clusters are thrown away, and fsyncs are most of the
    # time a write-heavy test waits for)
    fsync_by_default: bool = True

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        nodes: str | int = 0,
        args: list[str] | tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        log_level: str = "WARNING",
        tls: bool = False,
        fsync: bool | None = None,
        addons: bool = False,
    ) -> None:
        self.data_dir = Path(data_dir)
        # K3s' packaged add-ons (coredns, metrics-server) only when asked for, as `Cluster`
        self.addons = addons
        self.fsync = self.fsync_by_default if fsync is None else fsync
        self.tls = tls
        self.nodes = str(nodes)
        self.args = list(args)
        self.env = env
        self.log_level = log_level
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self._lines: list[str] = []
        self._ready = threading.Event()

    @property
    def kubeconfig(self) -> Path:
        return self.data_dir / "kubeconfig.yaml"

    @property
    def ca_path(self) -> Path:
        """The CA of the serving certificate (with `tls=True`)."""
        return self.data_dir / "server" / "tls" / "server-ca.crt"

    @property
    def admin_cert(self) -> tuple[Path, Path]:
        """The admin's client certificate and key (CN system:admin, O system:masters)."""
        tls = self.data_dir / "server" / "tls"
        return tls / "client-admin.crt", tls / "client-admin.key"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "server.log"

    def start(self, timeout: float = 60.0) -> ServerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "minik3s",
            "--log-level",
            self.log_level,
            "server",
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
            "--data-dir",
            str(self.data_dir),
            "--nodes",
            self.nodes,
            *(["--tls"] if self.tls else []),
            *([] if self.fsync else ["--unsafe-no-fsync"]),
            *([] if self.addons else ["--no-addons"]),
            *self.args,
        ]
        env = dict(os.environ)
        env.update(self.env or {})
        env.setdefault("PYTHONUNBUFFERED", "1")
        log = open(self.log_path, "a")  # noqa: SIM115 - closed when the process is reaped
        self._ready.clear()
        self.url = ""
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True, env=env
        )
        log.close()
        threading.Thread(target=self._drain, daemon=True, name="minik3s-stdout").start()
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.05):
            if self.proc.poll() is not None:
                raise RuntimeError(f"minik3s server exited with {self.proc.returncode}:\n{self.tail_log()}")
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"minik3s server not ready after {timeout}s:\n{self.tail_log()}")
        return self

    def _drain(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.append(line.rstrip("\n"))
            if "listening on " in line and not self.url:
                self.url = line.rsplit("listening on ", 1)[1].strip()
                self._ready.set()

    def tail_log(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def stop(self, timeout: float = 20.0, sig: int = signal.SIGTERM) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        rc = self.proc.returncode
        self.proc = None
        return rc

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.proc = None

    @property
    def stdout_lines(self) -> list[str]:
        return list(self._lines)

    def __enter__(self) -> ServerProcess:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
