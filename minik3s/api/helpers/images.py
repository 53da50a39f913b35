"""Image references and facts about well-known images the simulation needs (layer L2): the
normalised reference containerd reports, an image's repository, which images' default command
(CMD) is a shell, and the directories images ship beyond the standard root.

Why shared: the simulated kubelet (image names in statuses and events; what a container without
a command does) and the exec / attach handler (which shell answers `kubectl run -it x
--image=alpine`, where `dd of=/usr/share/nginx/html/f` may write) must agree.
"""

from __future__ import annotations

import functools

# images whose default command is a shell, by repository name (their Dockerfiles' CMD)
SHELL_IMAGES = {"busybox": "sh", "alpine": "/bin/sh", "ubuntu": "/bin/bash", "debian": "bash",
                "fedora": "/bin/bash", "centos": "/bin/bash", "rockylinux": "/bin/bash", "almalinux": "/bin/bash",
                "amazonlinux": "/bin/bash", "bash": "bash", "opensuse/leap": "/bin/bash"}


# directories well-known images ship beyond the standard root (the simulated filesystem has no
# image layers; these are where their users write: `dd of=/usr/share/nginx/html/f`)
IMAGE_DIRS = {"nginx": ("/usr/share/nginx/html", "/etc/nginx/conf.d", "/var/cache/nginx", "/var/log/nginx"),
              "httpd": ("/usr/local/apache2/htdocs", "/usr/local/apache2/conf"),
              "redis": ("/data",), "postgres": ("/var/lib/postgresql/data",), "mysql": ("/var/lib/mysql",)}


def normalize_image(image: str) -> str:
    """Docker-style reference normalisation as containerd reports it.
    "nginx" → "docker.io/library/nginx:latest"; "me/app:1" → "docker.io/me/app:1";
    "registry.k8s.io/pause:3.10" unchanged; digests keep their "@sha256:...".
    """
    image = image.strip()
    if not image:
        return image
    first, sep, _rest = image.partition("/")
    if not sep or ("." not in first and ":" not in first and first != "localhost"):
        image = f"docker.io/{image}" if sep else f"docker.io/library/{image}"
    last = image.rsplit("/", 1)[-1]
    if "@" not in last and ":" not in last:
        image += ":latest"
    return image


@functools.lru_cache(maxsize=1024)
def image_repository(image: str) -> str:
    """The repository of the normalised reference, without its registry when that is Docker
    Hub's (and without Hub's `library/`): `docker.io/library/busybox:1.36@sha256:...` ->
    `busybox`, `registry:5000/a/b:t` -> `a/b`, `me/app` -> `me/app`."""
    name = normalize_image(image).split("@", 1)[0]
    slash = name.rfind("/")
    if name.rfind(":") > slash:  # the tag
        name = name[: name.rfind(":")]
    registry, _, path = name.partition("/")
    return path.removeprefix("library/") if registry == "docker.io" else path


@functools.lru_cache(maxsize=1024)
def default_shell(image: str) -> str | None:
    """The shell an image runs when its container gives no command, or None (memoised: the
    simulated kubelet asks on every sync of a pod, and a cluster runs few distinct images)."""
    return SHELL_IMAGES.get(image_repository(image))
