"""Which container commands the simulator plays (minik3s.api.helpers.script) and what they do:
how long they run, their exit code, what they print; unknown behaviour is None (runs forever)."""

from __future__ import annotations

import math

import pytest

from minik3s.api.helpers.script import container_script, pod_outcome


def c(command=None, args=None, name="c"):
    out = {"name": name, "image": "busybox"}
    if command is not None:
        out["command"] = command
    if args is not None:
        out["args"] = args
    return out


@pytest.mark.parametrize(("container", "seconds", "code", "output"), [
    (c(["echo", "hello", "world"]), 0, 0, [(0, "hello world")]),
    (c(["/bin/echo"], ["-n", "x"]), 0, 0, [(0, "x")]),
    (c(["sleep", "3"]), 3, 0, []),
    (c(["sleep"], ["1m", "2.5"]), 62.5, 0, []),
    (c(["sh", "-c", "echo start; sleep 2; echo done; exit 3"]), 2, 3, [(0, "start"), (2, "done")]),
    (c(["/bin/sh", "-c", "echo 'a  b' \"c;d\""]), 0, 0, [(0, "a  b c;d")]),
    (c(["bash", "-c", "false && echo no || echo yes"]), 0, 0, [(0, "yes")]),
    (c(["sh", "-c", "true && false"]), 0, 1, []),
    (c(["sh", "-c", "false; echo after"]), 0, 0, [(0, "after")]),
    (c(["sh", "-ec", "false; echo never"]), 0, 1, []),
    (c(["sh", "-c", "sleep 1\nexit 7\necho unreachable"]), 1, 7, []),
    (c(["sh", "-c", "echo hi # a comment"]), 0, 0, [(0, "hi")]),
    (c(["sh", "-c", "echo a#b; echo '# not a comment'\n# a line\nexit 0"]), 0, 0, [(0, "a#b"), (0, "# not a comment")]),
    (c(["sh", "-c", "echo 'Hello, $USER!'; echo \"done!\""]), 0, 0, [(0, "Hello, $USER!"), (0, "done!")]),
    (c(["sh", "-c", "echo \\$HOME"]), 0, 0, [(0, "$HOME")]),
    (c(["sh"], ["-c", "exit 300"]), 0, 44, []),
    (c(["sh", "-c", "echo up; sleep infinity"]), math.inf, 0, [(0, "up")]),
    (c(["true"]), 0, 0, []),
    (c(["false"]), 0, 1, []),
])
def test_played_commands(container, seconds, code, output):
    s = container_script(container)
    assert s is not None
    assert (s.seconds, s.exit_code, list(s.output)) == (seconds, code, output)


@pytest.mark.parametrize("container", [
    c(),  # the image's entrypoint
    c(["nginx", "-g", "daemon off;"]),
    c(["sh", "-c", "echo $HOSTNAME"]),
    c(["sh", "-c", "echo \"$HOSTNAME\""]),
    c(["sh", "-c", "! true"]),
    c(["sh", "-c", "echo *"]),
    c(["sh", "-c", "echo hi > /tmp/x"]),
    c(["sh", "-c", "cat /etc/hosts | wc -l"]),
    c(["sh", "-c", "sleep 5 &"]),
    c(["sh", "-c", "while true; do sleep 1; done"]),
    c(["sh", "script.sh"]),
    c(["sleep", "soon"]),
    c(["sh", "-c", "echo 'unterminated"]),
    c(["exit", "x"]),
    c("echo hi"),  # not a list
])
def test_unknown_behaviour_is_none(container):
    assert container_script(container) is None


def test_pod_outcome_needs_every_container_to_end_and_no_restart():
    never = {"spec": {"restartPolicy": "Never", "containers": [c(["sleep", "4"], name="a"),
                                                                c(["sh", "-c", "exit 2"], name="b")]}}
    assert pod_outcome(never) == (4, {"a": 0, "b": 2})
    on_failure = {"spec": {"restartPolicy": "OnFailure", "containers": [c(["sh", "-c", "exit 2"])]}}
    assert pod_outcome(on_failure) is None  # it would restart
    on_failure["spec"]["containers"] = [c(["true"])]
    assert pod_outcome(on_failure) == (0, {"c": 0})
    assert pod_outcome({"spec": {"containers": [c(["true"])]}}) is None  # Always restarts
    mixed = {"spec": {"restartPolicy": "Never", "containers": [c(["true"], name="a"), c(name="b")]}}
    assert pod_outcome(mixed) is None
    forever = {"spec": {"restartPolicy": "Never", "containers": [c(["sleep", "infinity"])]}}
    assert pod_outcome(forever) is None
