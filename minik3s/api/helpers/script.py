"""What a simulated container's command would do (layer L2), shared by the simulated kubelet
(when the container exits, with which code) and `pods/log` (what it printed).

Simulated kubelets run no processes. A container whose `command`/`args` is a short script of
commands whose effect is known, run directly or through `sh -c` / `bash -c`, is played instead:

| command | effect |
|---|---|
| `echo [-n] WORDS` | prints WORDS (a line) |
| `sleep N` (`s`/`m`/`h`/`d` suffixes, `infinity`) | runs N seconds |
| `exit [N]`, `true`, `false`, `:` | ends with N (default: the last status), succeeds, fails, succeeds |

joined by `;`, newlines, `&&` and `||` (with their short-circuit meaning; `sh -e` stops at the
first failure). Anything else (another program, pipes, redirections, `$` expansions, loops) means
the container's behaviour is unknown: `container_script` returns None and the container runs
until the pod is deleted (or for `sim.minik3s.io/run-seconds`), as a container without a command
does.

Example: `["sh", "-c", "echo start; sleep 2; echo done; exit 3"]` -> runs 2 s, exits 3, prints
"start" at 0 s and "done" at 2 s.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from typing import Any

from minik3s.api.types import JsonDict

SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
# unquoted, these expand, redirect, glob or group: the script's effect is then unknown
_UNSUPPORTED = frozenset("$`<>*?(){}[]~")
_SLEEP_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_OPERATORS = (";", "&&", "||")


@dataclass(frozen=True, slots=True)
class Script:
    """A played command: how long it runs (math.inf: until stopped), its exit code, and its
    output lines with their offsets in seconds from the start."""

    seconds: float
    exit_code: int
    output: tuple[tuple[float, str], ...]


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


def _play_shell(text: str, errexit: bool) -> _Run:
    text = _check_plain(text)
    run = _Run()
    tokens = _shell_tokens(text)
    argv: list[str] = []
    skip = False
    for tok in [*tokens, ";"]:
        if tok not in _OPERATORS:
            argv.append(tok)
            continue
        if argv and not skip:
            run.command(argv)
            if run.exited or (errexit and run.status != 0 and tok == ";"):
                break
        argv = []
        # a && b runs b after a success, a || b after a failure; ';' always
        skip = (tok == "&&" and run.status != 0) or (tok == "||" and run.status == 0)
    return run


def _strings(v: Any) -> list[str] | None:
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        return None
    return list(v)


def container_script(container: JsonDict) -> Script | None:
    """The played command of a container, or None when its behaviour is unknown."""
    command, args = _strings(container.get("command")), _strings(container.get("args"))
    if command is None or args is None:
        return None
    argv = command + args
    if not argv:
        return None  # the image's own entrypoint: unknown
    try:
        name = argv[0].rsplit("/", 1)[-1]
        if name in SHELLS:
            flags = argv[1] if len(argv) > 2 else ""
            if not (flags.startswith("-") and flags.endswith("c") and set(flags[1:]) <= set("exc")):
                return None
            run = _play_shell(argv[2], errexit="e" in flags)
        else:
            run = _Run()
            run.command(argv)
    except (_Unknown, ValueError):
        return None
    return Script(seconds=run.t, exit_code=run.status, output=tuple(run.output))


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
