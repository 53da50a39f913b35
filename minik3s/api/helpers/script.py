"""What a simulated container's command would do (layer L2), shared by the simulated kubelet
(when the container exits, with which code) and `pods/log` (what it printed).

Simulated kubelets run no processes. A container whose `command`/`args` is a short script of
commands whose effect is known, run directly or through `sh -c` / `bash -c`, is played instead:

| command | effect |
|---|---|
| `echo [-n] WORDS` | prints WORDS (a line) |
| `sleep N` (`s`/`m`/`h`/`d` suffixes, `infinity`) | runs N seconds |
| `exit [N]`, `true`, `false`, `:` | ends with N (default: the last status), succeeds, fails, succeeds |
| `touch PATH...`, `rm [-f] [-r] PATH...` (absolute paths) | creates or removes those files at that moment |

joined by `;`, newlines, `&&` and `||` (with their short-circuit meaning; `sh -e` stops at the
first failure), and the endless loops of countless manifests, `while true; do ...; done` (also
`while :` and `until false`): its body runs again every time it ends, so a body that sleeps
prints its lines again each period for as long as the container runs (a body that takes no time
and prints nothing spins forever; one that prints without taking time is unknown). Anything else
(another program, pipes, redirections, `$` expansions, other loops or conditions) means the
container's behaviour is unknown: `container_script` returns None and the container runs until
the pod is deleted (or for `sim.minik3s.io/run-seconds`), as a container without a command does.

The files a script touches and removes are part of its effect (`Script.files_at`): what `kubectl
exec` and exec probes see in the container at a moment of its run. The docs' liveness tutorial,
`touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600`, has /tmp/healthy from 0 s to 30 s,
then runs until 630 s. `rm` without `-f` of a file the script did not create, and file effects
inside an endless loop, are unknown.

Example: `["sh", "-c", "echo start; sleep 2; echo done; exit 3"]` -> runs 2 s, exits 3, prints
"start" at 0 s and "done" at 2 s. `["sh", "-c", "while true; do echo tick; sleep 5; done"]` ->
runs until stopped, prints "tick" at 0, 5, 10, ... s.
"""

from __future__ import annotations

import functools
import math
import shlex
from dataclasses import dataclass
from typing import Any

from minik3s.api.helpers.images import default_shell
from minik3s.api.types import JsonDict

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
# unquoted, these expand, redirect, glob or group: the script's effect is then unknown
_UNSUPPORTED = frozenset("$`<>*?(){}[]~")
_SLEEP_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_OPERATORS = (";", "&&", "||")


# an endless loop's lines are generated up to this many at a time: a container that has
# printed more (days of a one-second loop) shows its newest lines, as the kubelet's log
# rotation keeps the newest
MAX_LOOP_LINES = 100_000


@dataclass(frozen=True, slots=True)
class Loop:
    """An endless loop: from `start` seconds, its body's `lines` (offsets within one run of the
    body) again every `period` seconds."""

    start: float
    period: float
    lines: tuple[tuple[float, str], ...]


@dataclass(frozen=True, slots=True)
class Script:
    """A played command: how long it runs (math.inf: until stopped), its exit code, its output
    lines before any endless loop with their offsets in seconds from the start, and the loop."""

    seconds: float
    exit_code: int
    output: tuple[tuple[float, str], ...]
    loop: Loop | None = None
    # (offset, absolute path, exists from then on): `touch` and `rm`, in order
    files: tuple[tuple[float, str, bool], ...] = ()

    def files_at(self, elapsed: float) -> dict[str, bool]:
        """The paths the script has touched (True) or removed (False) by `elapsed` seconds
        from its start (an effect at exactly `elapsed` has happened)."""
        out: dict[str, bool] = {}
        for at, path, exists in self.files:
            if at > elapsed:
                break
            out[path] = exists
        return out


    def lines_until(self, until: float, after: float = -math.inf) -> list[tuple[float, str]]:
        """The lines printed after `after` and by `until` seconds from the start (the newest
        MAX_LOOP_LINES of an endless loop's), in order; only the loop runs in that window are
        generated (a follow of a loop that ran for days asks for one second's worth)."""
        out = [ln for ln in self.output if after < ln[0] <= until]
        loop = self.loop
        if loop is None or not loop.lines or until < loop.start or not math.isfinite(until):
            return out
        last = math.floor((until - loop.start) / loop.period)
        first = max(0, last - MAX_LOOP_LINES // len(loop.lines))
        if after > loop.start:
            first = max(first, math.floor((after - loop.start) / loop.period))
        for k in range(first, last + 1):
            base = loop.start + k * loop.period
            out.extend((base + off, text) for off, text in loop.lines if after < base + off <= until)
        return out

    def next_line_after(self, elapsed: float) -> float | None:
        """The offset of the first line printed after `elapsed` seconds, or None."""
        later = [off for off, _ in self.output if off > elapsed]
        loop = self.loop
        if loop is not None and loop.lines:
            k = max(0, math.floor((elapsed - loop.start) / loop.period))
            for kk in (k, k + 1):
                base = loop.start + kk * loop.period
                later.extend(base + off for off, _ in loop.lines if base + off > elapsed)
        return min(later) if later else None


# a shell that reads its commands from an empty stdin: ends at once, successfully, saying nothing
_EXITS_AT_ONCE = Script(seconds=0.0, exit_code=0, output=())


class _Unknown(Exception):
    pass


def _sleep_seconds(args: list[str]) -> float:
    total = 0.0
    if not args:
        raise _Unknown
    for a in args:
        if a == "infinity":
            return math.inf
        unit = _SLEEP_UNITS.get(a[-1:], None)
        number = a[:-1] if unit is not None else a
        try:
            value = float(number)
        except ValueError:
            raise _Unknown from None
        if value < 0 or not math.isfinite(value):
            raise _Unknown
        total += value * (unit or 1.0)
    return total


class _Run:
    def __init__(self) -> None:
        self.t = 0.0
        self.status = 0
        self.output: list[tuple[float, str]] = []
        self.exited = False
        self.loop: Loop | None = None
        self.files: list[tuple[float, str, bool]] = []

    @property
    def done(self) -> bool:
        """Nothing after this point runs: an exit, or an endless loop (or sleep) entered."""
        return self.exited or math.isinf(self.t)

    def command(self, argv: list[str]) -> None:
        """Play one simple command (argv already split); raises _Unknown."""
        if not argv:
            return
        name, args = argv[0].rsplit("/", 1)[-1], argv[1:]
        if name == "echo":
            newline = True
            if args and args[0] == "-n":
                newline, args = False, args[1:]
            text = " ".join(args)
            if newline or text:
                self.output.append((self.t, text))
            self.status = 0
        elif name == "sleep":
            self.t += _sleep_seconds(args)
            self.status = 0
        elif name in ("true", ":"):
            self.status = 0
        elif name == "false":
            self.status = 1
        elif name in ("touch", "rm"):
            self._file_command(name, args)
        elif name == "exit":
            if len(args) > 1:
                raise _Unknown
            if args:
                try:
                    self.status = int(args[0]) & 0xFF
                except ValueError:
                    raise _Unknown from None
            self.exited = True
        else:
            raise _Unknown


    def _file_command(self, name: str, args: list[str]) -> None:
        """`touch PATH...` / `rm [-f] [-r] PATH...` on absolute paths (anything else: _Unknown)."""
        flags = set()
        while args and args[0].startswith("-") and len(args[0]) > 1:
            flags |= set(args[0][1:])
            args = args[1:]
        if not args or any(not p.startswith("/") or p.endswith("/") or "//" in p for p in args):
            raise _Unknown
        if name == "touch":
            if flags:
                raise _Unknown
            self.files.extend((self.t, p, True) for p in args)
        else:
            if not flags <= {"f", "r", "R"}:
                raise _Unknown
            made = {p for _, p, exists in self.files if exists}
            if "f" not in flags and any(p not in made for p in args):
                raise _Unknown  # it may not exist: rm's error and status depend on the image
            self.files.extend((self.t, p, False) for p in args)
        self.status = 0


def _shell_tokens(text: str) -> list[str]:
    lex = shlex.shlex(text.replace("\n", " ; "), posix=True, punctuation_chars=";&|")  # blank lines: no ";;"
    lex.whitespace_split = True
    lex.commenters = ""  # comments are already gone (_check_plain): "a#b" is one word
    tokens = list(lex)
    for t in tokens:
        if t in _OPERATORS:
            continue
        if t and set(t) <= set("&|;"):
            raise _Unknown  # pipes, background jobs, ";;" (quoted text is one word)
    return tokens


def _check_plain(text: str) -> str:
    """The script without its comments (an unquoted `#` starting a word, to the end of the line).
    Raises _Unknown when it uses what the player does not model: an unquoted expansion,
    redirection, glob or group, `$`/backquote inside double quotes, or `!` starting a word
    (negation); inside single quotes everything is literal ("echo 'Hi, $USER!'" is fine)."""
    quote = ""
    escaped = False
    prev = " "
    out: list[str] = []
    comment = False
    for ch in text:
        if comment:
            if ch != "\n":
                continue
            comment = False
        elif escaped:
            escaped = False
        elif quote == "'":
            if ch == "'":
                quote = ""
        elif quote == '"':
            if ch == '"':
                quote = ""
            elif ch == "\\":
                escaped = True
            elif ch in "$`":
                raise _Unknown
        elif ch == "\\":
            escaped = True
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and prev in " \t\n;&|":
            comment = True
            continue
        elif ch in _UNSUPPORTED or (ch == "!" and prev in " \t\n;&|"):
            raise _Unknown
        out.append(ch)
        prev = ch
    return "".join(out)


@dataclass(slots=True)
class _LoopNode:
    until: bool  # `until COND` (else `while COND`)
    condition: list[tuple[_Node, str]]
    body: list[tuple[_Node, str]]


_Node = list[str] | _LoopNode
# reserved words the player does not model, at a command's start
_UNKNOWN_KEYWORDS = frozenset({"if", "then", "elif", "else", "fi", "for", "in", "case", "esac", "select",
                               "function", "break", "continue", "do", "done", "{", "}", "!"})


def _parse_list(tokens: list[str], i: int, stop: str) -> tuple[list[tuple[_Node, str]], int]:
    """Commands and loops with the operator after each, up to the reserved word `stop` at a
    command's start (or the end when `stop` is "")."""
    items: list[tuple[_Node, str]] = []
    cur: _Node | None = None
    while i < len(tokens):
        tok = tokens[i]
        at_start = cur is None or (isinstance(cur, list) and not cur)
        if tok in _OPERATORS:
            if cur:
                items.append((cur, tok))
            cur = None
            i += 1
            continue
        if at_start and stop and tok == stop:
            break
        if isinstance(cur, _LoopNode):
            raise _Unknown  # a word right after `done`
        if at_start and tok in ("while", "until"):
            condition, i = _parse_list(tokens, i + 1, "do")
            body, i = _parse_list(tokens, i + 1, "done")
            cur = _LoopNode(tok == "until", condition, body)
            i += 1
            continue
        if at_start and tok in _UNKNOWN_KEYWORDS:
            raise _Unknown
        if cur is None:
            cur = []
        cur.append(tok)
        i += 1
    if stop and (i >= len(tokens) or tokens[i] != stop):
        raise _Unknown  # `while` without `do`, or `do` without `done`
    if cur:
        items.append((cur, ";"))
    return items, i


def _execute(run: _Run, items: list[tuple[_Node, str]], errexit: bool) -> None:
    skip = False
    for node, op in items:
        if not skip:
            if isinstance(node, _LoopNode):
                _execute_loop(run, node, errexit)
            else:
                run.command(node)
            if errexit and not run.done and run.status != 0 and op == ";":
                run.exited = True  # sh -e: the shell exits with the failed command's status
            if run.done:
                return
        # a && b runs b after a success, a || b after a failure; ';' always
        skip = (op == "&&" and run.status != 0) or (op == "||" and run.status == 0)


def _execute_loop(run: _Run, loop: _LoopNode, errexit: bool) -> None:
    """`while true` / `while :` / `until false`: the body once, then its lines again every
    period from then on. Any other condition is unknown."""
    endless = [(["false"] if loop.until else ["true"], ";")]
    if loop.condition != endless and not (not loop.until and loop.condition == [([":"], ";")]):
        raise _Unknown
    start, printed, effects = run.t, len(run.output), len(run.files)
    _execute(run, loop.body, errexit)
    if len(run.files) != effects:
        raise _Unknown  # files changing every period: not modelled
    if run.done:
        return  # the body exits, or sleeps forever, or loops forever itself: it never repeats
    period = run.t - start
    lines = tuple((at - start, text) for at, text in run.output[printed:])
    if period <= 0 and lines:
        raise _Unknown  # endless output in no time
    del run.output[printed:]
    if period > 0:
        run.loop = Loop(start, period, lines)
    run.t = math.inf


def _play_shell(text: str, errexit: bool) -> _Run:
    text = _check_plain(text)
    run = _Run()
    items, _ = _parse_list(_shell_tokens(text), 0, "")
    _execute(run, items, errexit)
    return run


def _strings(v: Any) -> list[str] | None:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        return None
    return list(v)


def container_script(container: JsonDict) -> Script | None:
    """The played command of a container, or None when its behaviour is unknown.

    A bare shell (`sh`, `bash -i`; or no command in an image whose default command is a shell:
    busybox, alpine, ubuntu, ...) reads its commands from stdin. Without `stdin: true` or `tty:
    true` the runtime gives it an empty stdin, so it exits 0 at once (and a Deployment's such
    pod goes into CrashLoopBackOff, as on a real node); with either it waits for input (attach)."""
    command, args = _strings(container.get("command")), _strings(container.get("args"))
    if command is None or args is None:
        return None
    argv = command + args
    if not argv:
        shell = default_shell(str(container.get("image") or ""))
        if shell is None:
            return None  # the image's own entrypoint: unknown
        argv = [shell]
    if argv[0].rsplit("/", 1)[-1] in SHELLS and all(a in ("-i", "-l", "-", "--login", "-s") for a in argv[1:]):
        return None if container.get("stdin") or container.get("tty") else _EXITS_AT_ONCE
    key = tuple(argv)
    # memoised (the simulated kubelet asks on every sync of a pod; a Script is immutable), for
    # commands of ordinary size only, so the memo stays small whatever pods are posted
    return _play_memo(key) if sum(map(len, key)) <= _MEMO_MAX_CHARS else _play(key)


_MEMO_MAX_CHARS = 4096


@functools.lru_cache(maxsize=4096)
def _play_memo(argv: tuple[str, ...]) -> Script | None:
    return _play(argv)


def _play(argv: tuple[str, ...]) -> Script | None:
    """The Script of one argv, or None when its behaviour is unknown."""
    try:
        name = argv[0].rsplit("/", 1)[-1]
        if name in SHELLS:
            flags = argv[1] if len(argv) > 2 else ""
            if not (flags.startswith("-") and flags.endswith("c") and set(flags[1:]) <= set("exc")):
                return None
            run = _play_shell(argv[2], errexit="e" in flags)
        else:
            run = _Run()
            run.command(list(argv))
    except (_Unknown, ValueError):
        return None
    return Script(seconds=run.t, exit_code=run.status, output=tuple(run.output), loop=run.loop,
                  files=tuple(run.files))


def pod_outcome(pod: JsonDict) -> tuple[float, dict[str, int]] | None:
    """When a pod's regular containers all end on their own, and the pod then ends rather than
    restarting them: (seconds until the last one ends, exit code per container). None when some
    container's command is unknown or runs forever, and for restartPolicy Always (or OnFailure
    with a failure), whose restarts the simulator does not play."""
    spec = pod.get("spec") or {}
    containers = [c for c in spec.get("containers") or () if isinstance(c, dict)]
    if not containers:
        return None
    policy = spec.get("restartPolicy") or "Always"
    if policy == "Always":
        return None
    seconds = 0.0
    codes: dict[str, int] = {}
    for c in containers:
        s = container_script(c)
        if s is None or not math.isfinite(s.seconds):
            return None
        seconds = max(seconds, s.seconds)
        codes[str(c.get("name") or "")] = s.exit_code
    if policy == "OnFailure" and any(codes.values()):
        return None
    return seconds, codes
