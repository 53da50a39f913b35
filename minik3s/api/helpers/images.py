"""Facts about well-known container images the simulation needs (layer L2): an image reference's
repository, and which images' default command (CMD) is a shell.

Why shared: the simulated kubelet (what a container without a command does) and the exec /
attach handler (which shell answers `kubectl run -it x --image=alpine`) must agree.
"""

from __future__ import annotations

# images whose default command is a shell, by repository name (their Dockerfiles' CMD)
SHELL_IMAGES = {"busybox": "sh", "alpine": "/bin/sh", "ubuntu": "/bin/bash", "debian": "bash",
                "fedora": "/bin/bash", "centos": "/bin/bash", "rockylinux": "/bin/bash", "almalinux": "/bin/bash",
                "amazonlinux": "/bin/bash", "bash": "bash", "opensuse/leap": "/bin/bash"}


def image_repository(image: str) -> str:
    """`docker.io/library/busybox:1.36@sha256:...` -> `busybox`, `registry:5000/a/b:t` -> `a/b`."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    if ":" in last:
        name = name[: len(name) - len(last)] + last.split(":", 1)[0]
    parts = name.split("/")
    if len(parts) > 1 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    if parts[:1] == ["library"]:
        parts = parts[1:]
    return "/".join(parts)
