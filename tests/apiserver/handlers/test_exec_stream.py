"""Pure parts of pods/exec and pods/attach: the query's flags (Convert_Slice_string_To_bool),
which containers run a shell as their process, image repository names, and the simulated
terminal's line discipline."""

from __future__ import annotations

from typing import Any

import pytest
from multidict import MultiDict

from apiserver.handlers.exec_stream import (
    _interactive_argv,
    _Stdin,
    _Terminal,
    exec_params,
)
from minik3s.api.helpers.images import IMAGE_DIRS, image_repository, normalize_image


@pytest.mark.parametrize(("query", "expected"), [
    ([], (False, False, False, False)),
    ([("stdout", "true"), ("stderr", "1")], (False, True, True, False)),
    ([("stdin", ""), ("stdout", "0"), ("stderr", "F")], (True, False, False, False)),
    ([("stdout", "yes"), ("stderr", "true"), ("tty", "true")], (False, True, False, True)),  # a tty has no stderr
], ids=["none", "true-and-1", "empty-is-true-0-and-F-false", "tty-drops-stderr"])
def test_exec_params_flags(query: list[tuple[str, str]], expected: tuple[bool, ...]) -> None:
    p = exec_params(MultiDict([("command", "sh"), ("command", "-c"), ("command", "true"), *query]))
    assert (p.stdin, p.stdout, p.stderr, p.tty) == expected
    assert p.command == ("sh", "-c", "true")


@pytest.mark.parametrize(("spec", "argv"), [
    ({"image": "busybox", "args": ["sh"], "stdin": True}, ["sh"]),
    ({"image": "busybox", "command": ["/bin/sh", "-i"], "stdin": True}, ["/bin/sh", "-i"]),
    ({"image": "busybox", "args": ["sh"]}, None),  # stdin not kept open: sh ends at once
    ({"image": "busybox", "args": ["sh", "-c", "sleep 3600"], "stdin": True}, None),  # a script
    ({"image": "docker.io/library/busybox:1.36", "stdin": True}, ["sh"]),  # the image's CMD
    ({"image": "ubuntu:24.04", "stdin": True}, ["/bin/bash"]),
    ({"image": "nginx:1.27", "stdin": True}, None),
], ids=["sh", "sh-i", "no-stdin", "script", "busybox-default", "ubuntu-default", "nginx"])
def test_interactive_argv(spec: dict[str, Any], argv: list[str] | None) -> None:
    assert _interactive_argv(spec) == argv


@pytest.mark.parametrize(("image", "repo"), [
    ("busybox", "busybox"), ("busybox:1.36", "busybox"), ("docker.io/library/busybox:1.36@sha256:ab", "busybox"),
    ("registry:5000/a/b:t", "a/b"), ("localhost/ubuntu", "ubuntu"), ("opensuse/leap:15", "opensuse/leap"),
])
def test_image_repository(image: str, repo: str) -> None:
    assert image_repository(image) == repo


@pytest.mark.parametrize(("image", "ref"), [
    ("nginx", "docker.io/library/nginx:latest"), ("me/app:1", "docker.io/me/app:1"),
    ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"), ("registry:5000/app", "registry:5000/app:latest"),
    ("busybox@sha256:ab", "docker.io/library/busybox@sha256:ab"), ("localhost/x", "localhost/x:latest"),
])
def test_one_normaliser_behind_statuses_and_repositories(image: str, ref: str) -> None:
    """The kubelet's reported reference and the repository exec keys its image facts by come
    from the same normalisation."""
    assert normalize_image(image) == ref
    assert image_repository(image) == image_repository(ref)


async def test_terminal_echoes_edits_and_hands_over_lines() -> None:
    stdin = _Stdin()
    echoed = bytearray()

    async def echo(data: bytes) -> None:
        echoed.extend(data)

    term = _Terminal(stdin, echo)
    await term.feed(b"ecx\x7fho hi\r")  # a typo erased
    assert await stdin.read() == b"echo hi\n"
    assert echoed == b"ecx\b \bho hi\n"  # the newline becomes CRLF on the way out (ONLCR)
    await term.feed(b"junk\x03")  # ^C drops the line
    await term.feed(b"\x04")  # ^D at the start of a line: end of input
    assert await stdin.read() == b""
    assert echoed.endswith(b"junk^C\n")


def test_well_known_images_have_their_directories() -> None:
    assert "/usr/share/nginx/html" in IMAGE_DIRS.get(image_repository("docker.io/library/nginx:1.27"), ())
    assert IMAGE_DIRS.get(image_repository("busybox"), ()) == ()
