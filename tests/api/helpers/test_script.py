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
    {**c(), "image": "nginx:1.27"},  # the image's entrypoint
    c(["nginx", "-g", "daemon off;"]),
    c(["sh", "-c", "echo $HOSTNAME"]),
    c(["sh", "-c", "echo \"$HOSTNAME\""]),
    c(["sh", "-c", "! true"]),
    c(["sh", "-c", "echo *"]),
    c(["sh", "-c", "echo hi > /tmp/x"]),
    c(["sh", "-c", "cat /etc/hosts | wc -l"]),
    c(["sh", "-c", "sleep 5 &"]),
    c(["sh", "-c", "while [ -f /tmp/x ]; do sleep 1; done"]),
    c(["sh", "-c", "while false; do echo never; sleep 1; done"]),
    c(["sh", "-c", "while true; do echo fast; done"]),  # endless output in no time
    c(["sh", "-c", "while true; do echo x; sleep 1; break; done"]),
    c(["sh", "-c", "for i in 1 2 3; do echo hi; done"]),
    c(["sh", "-c", "if true; then echo yes; fi"]),
    c(["sh", "-c", "while true; do echo x; sleep 1"]),  # no done
    c(["sh", "-c", "while true; do echo x; sleep 1; done echo"]),
    c(["sh", "script.sh"]),
    c(["sleep", "soon"]),
    c(["sh", "-c", "echo 'unterminated"]),
    c(["exit", "x"]),
    c("echo hi"),  # not a list
])
def test_unknown_behaviour_is_none(container):
    assert container_script(container) is None


@pytest.mark.parametrize(("script", "prefix", "start", "period", "lines"), [
    ("while true; do echo 'this is a test'; sleep 5; done", [], 0, 5, [(0, "this is a test")]),
    ("echo starting\nwhile :\ndo\n  sleep 2\n  echo tick\n  echo tock\ndone", [(0, "starting")], 0, 2,
     [(2, "tick"), (2, "tock")]),
    ("sleep 1; until false; do echo a; sleep 1; echo b; sleep 2; done; echo never", [], 1, 3, [(0, "a"), (1, "b")]),
    ("while true; do sleep 10; done", [], 0, 10, []),
])
def test_endless_loops_repeat_their_body(script, prefix, start, period, lines):
    s = container_script(c(["sh", "-c", script]))
    assert s is not None and s.loop is not None
    assert (s.seconds, list(s.output)) == (math.inf, prefix)
    assert (s.loop.start, s.loop.period, list(s.loop.lines)) == (start, period, lines)


def test_loop_lines_over_time():
    s = container_script(c(["sh", "-c", "echo up; while true; do echo tick; sleep 5; done"]))
    assert s is not None
    assert s.lines_until(0) == [(0, "up"), (0, "tick")]
    assert s.lines_until(12) == [(0, "up"), (0, "tick"), (5, "tick"), (10, "tick")]
    assert s.next_line_after(0) == 5 and s.next_line_after(12) == 15 and s.next_line_after(14.9) == 15
    many = s.lines_until(10_000_000)  # months: the newest MAX_LOOP_LINES ticks
    assert len(many) <= 100_002 and many[-1] == (10_000_000, "tick") and many[0] == (0, "up")
    # a window: what a follow asks for each time the loop prints, however long it has run
    assert s.lines_until(10_000_012, after=10_000_000) == [(10_000_005, "tick"), (10_000_010, "tick")]
    assert s.lines_until(5, after=0) == [(5, "tick")]  # "up" and the first tick were sent before
    assert s.lines_until(4.9, after=0) == []
    finite = container_script(c(["sh", "-c", "echo a; sleep 2; echo b"]))
    assert finite is not None and finite.next_line_after(0) == 2 and finite.next_line_after(2) is None


@pytest.mark.parametrize(("script", "seconds", "code", "output"), [
    ("while true; do echo once; exit 4; done; echo never", 0, 4, [(0, "once")]),
    ("while true; do echo up; sleep infinity; done", math.inf, 0, [(0, "up")]),
    ("while true; do :; done", math.inf, 0, []),  # spins, silently
    ("false || while true; do sleep 1; done", math.inf, 0, []),
])
def test_loops_that_never_repeat_or_never_print(script, seconds, code, output):
    s = container_script(c(["sh", "-c", script]))
    assert s is not None
    assert (s.seconds, s.exit_code, list(s.output)) == (seconds, code, output)


def test_pod_outcome_needs_every_container_to_end_and_no_restart():
    never = {"spec": {"restartPolicy": "Never", "containers": [c(["sleep", "4"], name="a"),
                                                                c(["sh", "-c", "exit 2"], name="b")]}}
    assert pod_outcome(never) == (4, {"a": 0, "b": 2})
    on_failure = {"spec": {"restartPolicy": "OnFailure", "containers": [c(["sh", "-c", "exit 2"])]}}
    assert pod_outcome(on_failure) is None  # it would restart
    on_failure["spec"]["containers"] = [c(["true"])]
    assert pod_outcome(on_failure) == (0, {"c": 0})
    assert pod_outcome({"spec": {"containers": [c(["true"])]}}) is None  # Always restarts
    mixed = {"spec": {"restartPolicy": "Never", "containers": [c(["true"], name="a"),
                                                                {**c(name="b"), "image": "registry.k8s.io/pause:3.10"}]}}
    assert pod_outcome(mixed) is None
    forever = {"spec": {"restartPolicy": "Never", "containers": [c(["sleep", "infinity"])]}}
    assert pod_outcome(forever) is None


@pytest.mark.parametrize(("container", "exits"), [
    pytest.param(c(), True, id="busybox-default-sh-empty-stdin"),
    pytest.param({**c(), "image": "docker.io/library/alpine:3.20"}, True, id="alpine-by-full-reference"),
    pytest.param(c(["sh"]), True, id="bare-sh"),
    pytest.param(c(["/bin/bash", "-i"]), True, id="interactive-bash-without-input"),
    pytest.param({**c(), "stdin": True}, False, id="stdin-open-waits"),
    pytest.param({**c(), "tty": True}, False, id="tty-keeps-it-running"),
    pytest.param({**c(["sh"]), "stdin": True, "tty": True}, False, id="kubectl-run-it"),
])
def test_a_shell_without_input_exits_at_once(container, exits):
    """The image's CMD shell (busybox, alpine, ...) or a bare `sh` reads an empty stdin unless
    the container keeps stdin open or has a tty: it ends at once with 0, as on a real node."""
    s = container_script(container)
    if exits:
        assert s is not None and (s.seconds, s.exit_code, list(s.output), s.loop) == (0.0, 0, [], None)
    else:
        assert s is None  # runs until something ends it (an attach's `exit`, the pod's deletion)


@pytest.mark.parametrize(("container", "seconds", "files"), [
    # the docs' liveness tutorial
    (c(["/bin/sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"]), 630,
     [(0, "/tmp/healthy", True), (30, "/tmp/healthy", False)]),
    (c(["sh", "-c", "touch /a /b && sleep 2 && rm /a; sleep 1; rm -rf /b /c"]), 3,
     [(0, "/a", True), (0, "/b", True), (2, "/a", False), (3, "/b", False), (3, "/c", False)]),
    (c(["touch", "/ready"]), 0, [(0, "/ready", True)]),
])
def test_file_effects(container, seconds, files):
    s = container_script(container)
    assert s is not None and s.seconds == seconds and list(s.files) == files


def test_files_at_a_moment_of_the_run():
    s = container_script(c(["sh", "-c", "touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600"]))
    assert s is not None
    assert s.files_at(0) == {"/tmp/healthy": True} and s.files_at(29.9) == {"/tmp/healthy": True}
    assert s.files_at(30) == {"/tmp/healthy": False}  # an effect at that very moment has happened
    assert s.files_at(600) == {"/tmp/healthy": False}  # the last effect holds to the end


@pytest.mark.parametrize("script", [
    "touch tmp/relative",  # relative to a working directory the player does not follow
    "touch -d yesterday /x",  # options change more than existence
    "rm /etc/hosts",  # not created by the script: rm's error and status depend on the image
    "rm -i /x",
    "touch /dir/",
    "while true; do touch /x; sleep 1; done",  # files changing every period
])
def test_unknown_file_effects(script):
    assert container_script(c(["sh", "-c", script])) is None
