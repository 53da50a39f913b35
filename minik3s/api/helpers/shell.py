"""A simulated POSIX shell (layer L2) answering `pods/exec` for simulated containers.

Simulated containers run no processes: the container's environment and filesystem are data
(`ExecContext`), and `run_exec` plays what the container runtime would do with an exec's argv.
argv[0] must name a program the simulated (busybox-like) image has, by name through `$PATH` or
by path (`/bin/NAME`, `/usr/bin/NAME`, ...); otherwise `ExecNotFound` is raised with the
runtime's message. The programs are busybox applets re-implemented here, printing busybox's
texts: `sh`/`ash`/`bash`, `cat`, `ls`, `date`, `uptime`, `hostname`, `seq`, `whoami`, `id`,
`uname`, `head`, `tail`, `wc`, `grep`, `gzip`/`gunzip`/`zcat`, `base64`, `test`/`[`, `mkdir`,
`touch`, `rm`, `tee`, `env`, `printenv`, `sleep`, `nproc`, `echo`, `printf`, `true`/`false`,
`pwd`, `kill`, `ps`, `xargs`, `basename`, `dirname`, `yes`, `sort`, `which`, and `tar` (`-c`/`-x`/`-t`,
what `kubectl cp` runs).

What is simulated:

- The shell language of busybox `ash` (the common subset): quoting ('...', "...", backslash),
  parameter expansion (`$V`, `${V}`, `${V:-w}` and the other `-=+?` forms, `${#V}`, `${V#p}`
  `${V%p}`, special parameters `$? $$ $# $@ $* $0 $1...`), command substitution (`$(...)` and
  backquotes), arithmetic `$((...))`, field splitting on `$IFS`, pathname globbing against the
  simulated files, pipes (stages run concurrently, connected by in-memory pipes; a stage that
  writes to a closed pipe ends with 141 as SIGPIPE would), redirections (`> >> < 2> 2>&1 >&2
  &> <>`, `/dev/null`), `; && || ! &`, `if`/`while`/`until`/`for`/`case`, `{ }`, `( )`
  (subshells do not leak variable or directory changes), functions, and the builtins `cd pwd
  export unset set shift read eval . exec exit return break continue wait local`;
  here-documents (`<<`, `<<-`, quoted delimiters), `set -e`/`sh -e`, and `set -x`/`sh -x`
  tracing (`+ cmd 'arg'` on stderr, quoted as ash quotes).
  `sh` with no `-c` reads its script from stdin incrementally and runs each complete command
  as soon as it has arrived, so an interactive session works over exec's stdin.
- Files: `ExecContext.files` (absolute path -> content) and `ExecContext.dirs` are the container
  filesystem; `>`/`>>`/`tee`/`touch`/`mkdir`/`rm`/`gzip` change them in place, so the next exec
  with the same context sees the change. Directories also exist where a file's parent is, and
  the standard root directories (`/bin`, `/dev`, `/etc`, ... `/var`) always exist.
- Time: `date`/`uptime` read `ExecContext.now`/`started` (always printed in UTC); `sleep` awaits
  `ExecContext.sleep`. Every loop iteration and every command yields to the event loop, so an
  endless loop never blocks it and its output streams as it happens.

What is not: no real program runs; a command the image does not have prints busybox's
`sh: NAME: not found` (status 127) inside a script. There is no terminal (no prompt, no line
editing, no job control), no signals beyond SIGPIPE, no users but root and /etc/passwd's, and
networking tools and `top` do not exist; `ps` lists the container's command as PID 1 and the
exec itself.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import fnmatch
import gzip
import itertools
import os
import posixpath
import re
import tarfile
import time
import zlib
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass, field
from io import BytesIO
from typing import Protocol

__all__ = ["ExecContext", "ExecNotFound", "Stdin", "run_exec"]


class ExecNotFound(Exception):
    """argv[0] is not a program the simulated image has: the message is what containerd/runc say:
    'exec: "<name>": executable file not found in $PATH' (or, for a path,
    'exec: "<path>": stat <path>: no such file or directory': Go's exec.Error)."""


class Stdin(Protocol):
    """The exec session's stdin, as the client sends it."""

    async def read(self) -> bytes:
        """The next chunk the client sent; b"" at EOF (stdin closed)."""
        ...


@dataclass
class ExecContext:
    """The simulated container an exec runs in."""

    env: dict[str, str]
    files: MutableMapping[str, bytes]
    hostname: str
    now: Callable[[], float]
    started: float
    sleep: Callable[[float], Awaitable[None]]
    workdir: str = "/"
    uid: int = 0
    dirs: set[str] = field(default_factory=set)
    tty: bool = False  # stdin is a terminal: a shell reading it prompts (PS1 `\w \$ `, PS2 `> `)
    command: tuple[str, ...] = ()  # the container's own process (PID 1), as `ps` lists it
    # read-only mount points (ConfigMap, Secret, downward API and projected volumes, and
    # `readOnly` mounts): writing under them fails with EROFS
    readonly: tuple[str, ...] = ()
    # writable mount points under a read-only one (an emptyDir at /tmp of a container whose root
    # filesystem is read-only): the deepest mount point containing a path decides
    writable: tuple[str, ...] = ()


Writer = Callable[[bytes], Awaitable[None]]

ROOT_DIRS = ("bin", "dev", "etc", "home", "lib", "proc", "root", "sys", "tmp", "usr", "var")
BIN_DIRS = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"})
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SHELL_NAMES = frozenset({"sh", "ash", "bash"})
KERNEL_RELEASE = "6.8.0-49-generic"
KERNEL_VERSION = "#49-Ubuntu SMP PREEMPT_DYNAMIC Mon Nov  4 02:06:24 UTC 2024"
MACHINE = "x86_64"
SIGPIPE_STATUS = 141
SEGV_STATUS = 139  # 128 + SIGSEGV
# bounds that keep an exec from taking the server with it: one file's (and one command
# substitution's) size, and the share of the event loop a command that never waits may take
# (after BUSY_SLICE seconds of work without a real wait it pauses BUSY_PAUSE seconds, as a
# container's CPU limit throttles it)
FILE_LIMIT = 64 * 1024 * 1024
BUSY_SLICE = 0.002
BUSY_PAUSE = 0.008
_pids = itertools.count(7)


def _b(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _s(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


# ---------------------------------------------------------------------------------------------
# control flow


class _ShellExit(Exception):
    """`exit N` (or a fatal shell error): the shell (or subshell) ends with `status`."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _LoopControl(Exception):
    """`break N` / `continue N`."""

    def __init__(self, kind: str, levels: int) -> None:
        super().__init__(kind)
        self.kind = kind
        self.levels = levels


class _Return(Exception):
    """`return N` from a function."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _NoSpace(Exception):
    """A write past the simulation's bounds (a file or a command substitution larger than
    FILE_LIMIT): the writer fails as on a full disk, instead of the server's memory filling."""


class _BrokenPipe(Exception):
    """A write to a pipe whose reader has gone (SIGPIPE)."""


class _ShellError(Exception):
    """An error the shell reports as `sh: MESSAGE` (expansion, redirection)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class _Incomplete(Exception):
    """The script text ends in the middle of a command: more input is needed."""

    def __init__(self, message: str = "syntax error: unexpected end of file") -> None:
        super().__init__(message)
        self.message = message


class _SyntaxError(Exception):
    """The script text cannot be parsed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---------------------------------------------------------------------------------------------
# streams


class _Reader:
    """A readable file descriptor, with a pushback buffer (for `read` and `head`)."""

    def __init__(self) -> None:
        self._pending = b""

    async def _next(self) -> bytes:
        return b""

    async def read(self) -> bytes:
        """The next chunk; b"" at EOF."""
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        await asyncio.sleep(0)
        return await self._next()

    def unread(self, data: bytes) -> None:
        self._pending = data + self._pending

    async def read_all(self) -> bytes:
        parts: list[bytes] = []
        while chunk := await self.read():
            parts.append(chunk)
        return b"".join(parts)

    async def read_line(self) -> bytes:
        """One line with its newline (without one at EOF); b"" at EOF."""
        buf = b""
        while b"\n" not in buf:
            chunk = await self.read()
            if not chunk:
                return buf
            buf += chunk
        line, rest = buf.split(b"\n", 1)
        if rest:
            self.unread(rest)
        return line + b"\n"


class _BytesReader(_Reader):
    def __init__(self, data: bytes) -> None:
        super().__init__()
        self._data = data

    async def _next(self) -> bytes:
        data, self._data = self._data, b""
        return data


class _StdinReader(_Reader):
    def __init__(self, stdin: Stdin) -> None:
        super().__init__()
        self._stdin = stdin
        self._eof = False

    async def _next(self) -> bytes:
        if self._eof:
            return b""
        data = await self._stdin.read()
        if not data:
            self._eof = True
        return data


class _Pipe:
    """An in-memory pipe between two pipeline stages."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue(maxsize=16)
        self.reader_closed = False
        self.writer_closed = False

    async def write(self, data: bytes) -> None:
        if self.reader_closed:
            raise _BrokenPipe()
        await self.queue.put(data)
        if self.reader_closed:
            raise _BrokenPipe()

    async def close_write(self) -> None:
        if not self.writer_closed:
            self.writer_closed = True
            if not self.reader_closed:
                await self.queue.put(None)

    def close_read(self) -> None:
        self.reader_closed = True
        while not self.queue.empty():
            self.queue.get_nowait()


class _PipeReader(_Reader):
    def __init__(self, pipe: _Pipe) -> None:
        super().__init__()
        self._pipe = pipe
        self._eof = False

    async def _next(self) -> bytes:
        if self._eof:
            return b""
        data = await self._pipe.queue.get()
        if data is None:
            self._eof = True
            return b""
        return data


class _Sink:
    """A writable file descriptor."""

    async def write(self, data: bytes) -> None:
        del data


class _CallbackSink(_Sink):
    def __init__(self, fn: Writer) -> None:
        self._fn = fn

    async def write(self, data: bytes) -> None:
        if data:
            await self._fn(data)


class _BufferSink(_Sink):
    def __init__(self) -> None:
        self.data = bytearray()

    async def write(self, data: bytes) -> None:
        if len(self.data) + len(data) > FILE_LIMIT:
            raise _NoSpace()
        self.data += data
        await asyncio.sleep(0)


class _PipeSink(_Sink):
    def __init__(self, pipe: _Pipe) -> None:
        self._pipe = pipe

    async def write(self, data: bytes) -> None:
        if data:
            await self._pipe.write(data)


class _FileSink(_Sink):
    def __init__(self, files: MutableMapping[str, bytes], path: str) -> None:
        self._files = files
        self._path = path

    async def write(self, data: bytes) -> None:
        current = self._files.get(self._path, b"")
        if len(current) + len(data) > FILE_LIMIT:
            raise _NoSpace()
        self._files[self._path] = current + data


_Fd = _Reader | _Sink


@dataclass
class _IO:
    """A command's file descriptors."""

    fds: dict[int, _Fd]

    @property
    def stdin(self) -> _Reader:
        fd = self.fds.get(0)
        return fd if isinstance(fd, _Reader) else _BytesReader(b"")

    def sink(self, n: int) -> _Sink:
        fd = self.fds.get(n)
        return fd if isinstance(fd, _Sink) else _Sink()

    async def out(self, data: bytes | str) -> None:
        await self.sink(1).write(_b(data) if isinstance(data, str) else data)

    async def err(self, data: bytes | str) -> None:
        await self.sink(2).write(_b(data) if isinstance(data, str) else data)

    def replace(self, n: int, fd: _Fd) -> _IO:
        fds = dict(self.fds)
        fds[n] = fd
        return _IO(fds)


# ---------------------------------------------------------------------------------------------
# the filesystem


def _norm(cwd: str, path: str) -> str:
    p = posixpath.normpath(posixpath.join(cwd, path))
    return "/" + p.lstrip("/")


class _Fs:
    """The container filesystem: `ExecContext.files` and directories."""

    def __init__(self, ctx: ExecContext) -> None:
        self.files = ctx.files
        self.extra_dirs = ctx.dirs
        self.readonly = ctx.readonly
        self.writable = ctx.writable
        self._busy_since = self._last_step = time.monotonic()

    async def pace(self) -> None:
        """Between commands: yield to the event loop, and throttle a command that never waits
        (`while :; do :; done`): after BUSY_SLICE seconds of back-to-back steps, pause for
        BUSY_PAUSE seconds. A gap longer than a slice since the last step (a sleep, a read of
        stdin) starts a new slice, so interactive use is not slowed."""
        now = time.monotonic()
        if now - self._last_step > BUSY_SLICE:
            self._busy_since = now
        elif now - self._busy_since > BUSY_SLICE:
            await asyncio.sleep(BUSY_PAUSE)
            self._busy_since = now = time.monotonic()
            self._last_step = now
            return
        self._last_step = now
        await asyncio.sleep(0)

    def dirs(self) -> set[str]:
        out = {"/", "/usr/bin", "/usr/sbin"} | {"/" + d for d in ROOT_DIRS}
        for p in itertools.chain(self.files, self.extra_dirs):
            parent = p if p in self.extra_dirs else posixpath.dirname(p)
            while parent not in out:
                out.add(parent)
                parent = posixpath.dirname(parent)
        return out

    def is_dir(self, path: str) -> bool:
        return path in self.dirs()

    def is_file(self, path: str) -> bool:
        if path in self.files:
            return True
        return posixpath.dirname(path) in BIN_DIRS and posixpath.basename(path) in APPLETS

    def exists(self, path: str) -> bool:
        return self.is_file(path) or self.is_dir(path) or path in ("/dev/null", "/dev/zero")

    def read(self, path: str) -> bytes:
        return self.files.get(path, b"")

    def children(self, path: str) -> list[str]:
        names = {posixpath.basename(p) for p in self.files if posixpath.dirname(p) == path}
        names |= {posixpath.basename(d) for d in self.dirs() if d != "/" and posixpath.dirname(d) == path}
        if path == "/bin":
            names |= set(APPLETS)
        if path == "/dev":
            names |= {"null", "zero", "stdin", "stdout", "stderr"}
        return sorted(names)

    def mkdir(self, path: str) -> None:
        self.extra_dirs.add(path)

    def read_only(self, path: str) -> bool:
        """Whether `path` is on a read-only mount (EROFS for any write there): the deepest mount
        point that contains it decides."""
        def depth(mounts: tuple[str, ...]) -> int:
            return max((len(m) for m in mounts if path == m or path.startswith(m.rstrip("/") + "/")), default=-1)
        return depth(self.readonly) > depth(self.writable)

    def remove(self, path: str) -> None:
        for p in [p for p in self.files if p == path or p.startswith(path.rstrip("/") + "/")]:
            del self.files[p]
        for d in [d for d in self.extra_dirs if d == path or d.startswith(path.rstrip("/") + "/")]:
            self.extra_dirs.discard(d)


# ---------------------------------------------------------------------------------------------
# lexer


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # WORD, OP, NEWLINE, IO_NUMBER, EOF
    value: str
    line: int


_OPERATORS = ("&&", "||", ";;", "&>>", "&>", ">>", ">&", ">|", "<<-", "<<", "<&", "<>", ";", "&", "|", "(", ")", "<", ">")
_REDIR_OPS = frozenset({"&>>", "&>", ">>", ">&", ">|", "<&", "<>", "<", ">", "<<", "<<-"})
_META = frozenset(" \t\n;&|<>()")
_RESERVED_END = frozenset({"then", "elif", "else", "fi", "do", "done", "esac", "}"})


def _scan_squote(src: str, i: int) -> int:
    """Index after the closing quote of a '...' string whose body starts at i."""
    j = src.find("'", i)
    if j < 0:
        raise _Incomplete("syntax error: unterminated quoted string")
    return j + 1


def _scan_dquote(src: str, i: int) -> int:
    """Index after the closing quote of a "..." string whose body starts at i."""
    n = len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            i += 2
        elif c == '"':
            return i + 1
        elif c == "$":
            i = _scan_dollar(src, i)
        elif c == "`":
            i = _scan_backquote(src, i + 1)
        else:
            i += 1
    raise _Incomplete("syntax error: unterminated quoted string")


def _scan_backquote(src: str, i: int) -> int:
    n = len(src)
    while i < n:
        if src[i] == "\\":
            i += 2
        elif src[i] == "`":
            return i + 1
        else:
            i += 1
    raise _Incomplete("syntax error: unterminated quoted string")


def _scan_parens(src: str, i: int) -> int:
    """Index after the `)` matching an already-open `(` (body starts at i)."""
    depth, n = 1, len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            i = _scan_squote(src, i + 1)
            continue
        if c == '"':
            i = _scan_dquote(src, i + 1)
            continue
        if c == "`":
            i = _scan_backquote(src, i + 1)
            continue
        if c == "$":
            i = _scan_dollar(src, i)
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise _Incomplete()


def _scan_braces(src: str, i: int) -> int:
    """Index after the `}` closing a `${` (body starts at i)."""
    n = len(src)
    while i < n:
        c = src[i]
        if c == "\\":
            i += 2
        elif c == "'":
            i = _scan_squote(src, i + 1)
        elif c == '"':
            i = _scan_dquote(src, i + 1)
        elif c == "$":
            i = _scan_dollar(src, i)
        elif c == "`":
            i = _scan_backquote(src, i + 1)
        elif c == "}":
            return i + 1
        else:
            i += 1
    raise _Incomplete("syntax error: missing '}'")


def _scan_dollar(src: str, i: int) -> int:
    """Index after the expansion starting with the `$` at i."""
    if src.startswith("$((", i):
        return _scan_parens(src, i + 2)
    if src.startswith("$(", i):
        return _scan_parens(src, i + 2)
    if src.startswith("${", i):
        return _scan_braces(src, i + 2)
    return i + 1


def _scan_word(src: str, i: int) -> int:
    n = len(src)
    while i < n:
        c = src[i]
        if c in _META:
            break
        if c == "\\":
            if i + 1 >= n or (src[i + 1] == "\n" and i + 2 >= n):
                raise _Incomplete()  # a line continuation: the word goes on in the next line
            i += 2
        elif c == "'":
            i = _scan_squote(src, i + 1)
        elif c == '"':
            i = _scan_dquote(src, i + 1)
        elif c == "`":
            i = _scan_backquote(src, i + 1)
        elif c == "$":
            i = _scan_dollar(src, i)
        else:
            i += 1
    return i


def _read_heredoc(src: str, i: int, delim: str, strip_tabs: bool) -> tuple[str, int]:
    """The body of a here-document starting at i, and the index after its delimiter line."""
    body: list[str] = []
    while True:
        j = src.find("\n", i)
        if j < 0 and (i >= len(src) or src[i:].lstrip("\t" if strip_tabs else "") != delim):
            raise _Incomplete()
        j = len(src) if j < 0 else j
        line = src[i:j]
        i = j + 1
        if strip_tabs:
            line = line.lstrip("\t")
        if line == delim:
            return "".join(body), i
        body.append(line + "\n")


def _tokenize(src: str) -> list[_Tok]:
    """Tokens (POSIX 2.3); a here-document's body becomes a HEREDOC token after its `<<`'s
    delimiter word."""
    toks: list[_Tok] = []
    pending: list[int] = []  # indexes of `<<` delimiter tokens whose bodies follow the newline
    i, n, line = 0, len(src), 1
    while i < n:
        c = src[i]
        if c in " \t":
            i += 1
        elif c == "\\" and src.startswith("\\\n", i):
            if i + 2 >= n:
                raise _Incomplete()
            i, line = i + 2, line + 1
        elif c == "#":
            j = src.find("\n", i)
            i = n if j < 0 else j
        elif c == "\n":
            toks.append(_Tok("NEWLINE", "\n", line))
            i, line = i + 1, line + 1
            for k in pending:
                delim = toks[k].value
                word = re.sub(r"""\\(.)|['"]""", lambda m: m.group(1) or "", delim)
                body, end = _read_heredoc(src, i, word, toks[k - 1].value == "<<-")
                quoted = "q" if word != delim else ""
                toks[k] = _Tok("HEREDOC" + quoted, body, toks[k].line)
                line += src.count("\n", i, end)
                i = end
            pending.clear()
        else:
            operator = next((o for o in _OPERATORS if src.startswith(o, i)), None)
            if operator is not None:
                toks.append(_Tok("OP", operator, line))
                i += len(operator)
                continue
            j = _scan_word(src, i)
            word = src[i:j]
            kind = "IO_NUMBER" if word.isdigit() and j < n and src[j] in "<>" else "WORD"
            if toks and toks[-1].kind == "OP" and toks[-1].value in ("<<", "<<-"):
                pending.append(len(toks))
            toks.append(_Tok(kind, word.replace("\\\n", ""), line))
            line += word.count("\n")
            i = j
    if pending:
        raise _Incomplete()
    toks.append(_Tok("EOF", "", line))
    return toks


# ---------------------------------------------------------------------------------------------
# syntax tree


@dataclass(frozen=True, slots=True)
class _Redir:
    fd: int | None
    op: str
    target: str


@dataclass(frozen=True, slots=True)
class _Simple:
    assigns: tuple[str, ...]
    words: tuple[str, ...]
    redirs: tuple[_Redir, ...]
    line: int


@dataclass(frozen=True, slots=True)
class _Pipeline:
    cmds: tuple[_Node, ...]
    negate: bool


@dataclass(frozen=True, slots=True)
class _AndOr:
    first: _Pipeline
    rest: tuple[tuple[str, _Pipeline], ...]


@dataclass(frozen=True, slots=True)
class _List:
    items: tuple[tuple[_AndOr, bool], ...]


@dataclass(frozen=True, slots=True)
class _If:
    branches: tuple[tuple[_List, _List], ...]
    else_: _List | None
    redirs: tuple[_Redir, ...] = ()


@dataclass(frozen=True, slots=True)
class _While:
    cond: _List
    body: _List
    until: bool
    redirs: tuple[_Redir, ...] = ()


@dataclass(frozen=True, slots=True)
class _For:
    var: str
    words: tuple[str, ...] | None
    body: _List
    redirs: tuple[_Redir, ...] = ()


@dataclass(frozen=True, slots=True)
class _Case:
    word: str
    items: tuple[tuple[tuple[str, ...], _List], ...]
    redirs: tuple[_Redir, ...] = ()


@dataclass(frozen=True, slots=True)
class _Group:
    body: _List
    subshell: bool
    redirs: tuple[_Redir, ...] = ()


@dataclass(frozen=True, slots=True)
class _FuncDef:
    name: str
    body: _Node


_Node = _Simple | _If | _While | _For | _Case | _Group | _FuncDef
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _unexpected(tok: _Tok) -> Exception:
    if tok.kind == "EOF":
        return _Incomplete()
    if tok.kind == "NEWLINE":
        return _SyntaxError("syntax error: unexpected newline")
    return _SyntaxError(f'syntax error: unexpected "{tok.value}"')


class _Parser:
    """A recursive-descent parser of the POSIX shell grammar (the subset ash users write)."""

    def __init__(self, src: str) -> None:
        self.toks = _tokenize(src)
        self.pos = 0

    def peek(self, k: int = 0) -> _Tok:
        return self.toks[min(self.pos + k, len(self.toks) - 1)]

    def take(self) -> _Tok:
        tok = self.peek()
        self.pos += 1
        return tok

    def at_word(self, *values: str) -> bool:
        tok = self.peek()
        return tok.kind == "WORD" and tok.value in values

    def at_op(self, *values: str) -> bool:
        tok = self.peek()
        return tok.kind == "OP" and tok.value in values

    def skip_newlines(self) -> None:
        while self.peek().kind == "NEWLINE":
            self.pos += 1

    def expect_word(self, value: str) -> None:
        if not self.at_word(value):
            raise _unexpected(self.peek())
        self.pos += 1

    def expect_op(self, value: str) -> None:
        if not self.at_op(value):
            raise _unexpected(self.peek())
        self.pos += 1

    def program(self) -> _List:
        body = self.list_()
        if self.peek().kind != "EOF":
            raise _unexpected(self.peek())
        return body

    def list_(self) -> _List:
        items: list[tuple[_AndOr, bool]] = []
        self.skip_newlines()
        while True:
            tok = self.peek()
            if tok.kind == "EOF" or self.at_op(")", ";;") or self.at_word(*_RESERVED_END):
                break
            and_or = self.and_or()
            background = self.at_op("&")
            if self.at_op(";", "&"):
                self.pos += 1
            elif self.peek().kind != "NEWLINE":
                items.append((and_or, background))
                break
            items.append((and_or, background))
            self.skip_newlines()
        return _List(tuple(items))

    def body(self) -> _List:
        body = self.list_()
        if not body.items:
            raise _unexpected(self.peek())
        return body

    def and_or(self) -> _AndOr:
        first = self.pipeline()
        rest: list[tuple[str, _Pipeline]] = []
        while self.at_op("&&", "||"):
            op = self.take().value
            self.skip_newlines()
            rest.append((op, self.pipeline()))
        return _AndOr(first, tuple(rest))

    def pipeline(self) -> _Pipeline:
        negate = False
        while self.at_word("!"):
            self.pos += 1
            negate = not negate
        cmds = [self.command()]
        while self.at_op("|"):
            self.pos += 1
            self.skip_newlines()
            cmds.append(self.command())
        return _Pipeline(tuple(cmds), negate)

    def command(self) -> _Node:
        tok = self.peek()
        if tok.kind == "WORD":
            table: dict[str, Callable[[], _Node]] = {
                "if": self.if_, "while": self.while_, "until": self.while_,
                "for": self.for_, "case": self.case_, "{": self.group,
            }
            compound = table.get(tok.value)
            if compound is not None:
                return compound()
            nxt, nxt2 = self.peek(1), self.peek(2)
            if (_NAME_RE.fullmatch(tok.value) and nxt.kind == "OP" and nxt.value == "("
                    and nxt2.kind == "OP" and nxt2.value == ")"):
                return self.funcdef()
        if self.at_op("("):
            return self.group()
        return self.simple()

    def redirs(self) -> tuple[_Redir, ...]:
        out: list[_Redir] = []
        while self.peek().kind == "IO_NUMBER" or self.at_op(*_REDIR_OPS):
            out.append(self.redir())
        return tuple(out)

    def redir(self) -> _Redir:
        fd = int(self.take().value) if self.peek().kind == "IO_NUMBER" else None
        op = self.take().value
        target = self.take()
        if op in ("<<", "<<-") and target.kind.startswith("HEREDOC"):
            return _Redir(fd, "<<" + target.kind[7:], target.value)
        if target.kind != "WORD":
            raise _unexpected(target)
        return _Redir(fd, op, target.value)

    def simple(self) -> _Simple:
        line = self.peek().line
        assigns: list[str] = []
        words: list[str] = []
        redirs: list[_Redir] = []
        while True:
            tok = self.peek()
            if tok.kind == "IO_NUMBER" or self.at_op(*_REDIR_OPS):
                redirs.append(self.redir())
            elif tok.kind == "WORD":
                if not words and _ASSIGN_RE.match(tok.value):
                    assigns.append(tok.value)
                else:
                    words.append(tok.value)
                self.pos += 1
            else:
                break
        if not (assigns or words or redirs):
            raise _unexpected(self.peek())
        return _Simple(tuple(assigns), tuple(words), tuple(redirs), line)

    def if_(self) -> _If:
        self.pos += 1
        branches: list[tuple[_List, _List]] = []
        cond = self.body()
        self.expect_word("then")
        branches.append((cond, self.body()))
        else_: _List | None = None
        while True:
            if self.at_word("elif"):
                self.pos += 1
                cond = self.body()
                self.expect_word("then")
                branches.append((cond, self.body()))
            elif self.at_word("else"):
                self.pos += 1
                else_ = self.body()
            else:
                break
        self.expect_word("fi")
        return _If(tuple(branches), else_, self.redirs())

    def while_(self) -> _While:
        until = self.take().value == "until"
        cond = self.body()
        self.expect_word("do")
        body = self.body()
        self.expect_word("done")
        return _While(cond, body, until, self.redirs())

    def for_(self) -> _For:
        self.pos += 1
        name = self.take()
        if name.kind != "WORD" or not _NAME_RE.fullmatch(name.value):
            raise _unexpected(name) if name.kind == "EOF" else _SyntaxError("syntax error: bad for loop variable")
        self.skip_newlines()
        words: tuple[str, ...] | None = None
        if self.at_word("in"):
            self.pos += 1
            collected: list[str] = []
            while self.peek().kind == "WORD":
                collected.append(self.take().value)
            words = tuple(collected)
            if self.at_op(";"):
                self.pos += 1
            elif self.peek().kind != "NEWLINE":
                raise _unexpected(self.peek())
        elif self.at_op(";"):
            self.pos += 1
        self.skip_newlines()
        self.expect_word("do")
        body = self.body()
        self.expect_word("done")
        return _For(name.value, words, body, self.redirs())

    def case_(self) -> _Case:
        self.pos += 1
        word = self.take()
        if word.kind != "WORD":
            raise _unexpected(word)
        self.skip_newlines()
        self.expect_word("in")
        self.skip_newlines()
        items: list[tuple[tuple[str, ...], _List]] = []
        while not self.at_word("esac"):
            if self.at_op("("):
                self.pos += 1
            patterns: list[str] = []
            while True:
                tok = self.take()
                if tok.kind != "WORD":
                    raise _unexpected(tok)
                patterns.append(tok.value)
                if not self.at_op("|"):
                    break
                self.pos += 1
            self.expect_op(")")
            body = self.list_()
            items.append((tuple(patterns), body))
            if self.at_op(";;"):
                self.pos += 1
                self.skip_newlines()
            elif not self.at_word("esac"):
                raise _unexpected(self.peek())
        self.pos += 1
        return _Case(word.value, tuple(items), self.redirs())

    def group(self) -> _Group:
        subshell = self.take().value == "("
        body = self.body()
        if subshell:
            self.expect_op(")")
        else:
            self.expect_word("}")
        return _Group(body, subshell, self.redirs())

    def funcdef(self) -> _FuncDef:
        name = self.take().value
        self.pos += 2
        self.skip_newlines()
        return _FuncDef(name, self.command())


def _parse(src: str) -> _List:
    return _Parser(src).program()


# ---------------------------------------------------------------------------------------------
# arithmetic


_ARITH_TOKEN = re.compile(r"\s*(0[xX][0-9a-fA-F]+|\d+|[A-Za-z_][A-Za-z0-9_]*|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%()<>!~&|^?:])")
_BINARY_PREC = {
    "||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6,
    "<": 7, ">": 7, "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}


def _arith_int(text: str) -> int:
    text = text.strip()
    if not text:
        return 0
    try:
        if text.lower().startswith("0x"):
            return int(text, 16)
        if len(text) > 1 and text.startswith("0"):
            return int(text, 8)
        return int(text)
    except ValueError:
        raise _ShellError("arithmetic syntax error") from None


class _Arith:
    """$((...)): C integer arithmetic (ash's `arith`), variables read as numbers."""

    def __init__(self, text: str, lookup: Callable[[str], str]) -> None:
        self.toks: list[str] = []
        pos, text = 0, text.strip()
        while pos < len(text):
            m = _ARITH_TOKEN.match(text, pos)
            if m is None:
                raise _ShellError("arithmetic syntax error")
            self.toks.append(m.group(1))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.pos = 0
        self.lookup = lookup

    def evaluate(self) -> int:
        if not self.toks:
            return 0
        value = self.ternary()
        if self.pos != len(self.toks):
            raise _ShellError("arithmetic syntax error")
        return value

    def peek(self) -> str:
        return self.toks[self.pos] if self.pos < len(self.toks) else ""

    def ternary(self) -> int:
        cond = self.binary(1)
        if self.peek() != "?":
            return cond
        self.pos += 1
        yes = self.ternary()
        if self.peek() != ":":
            raise _ShellError("arithmetic syntax error")
        self.pos += 1
        no = self.ternary()
        return yes if cond else no

    def binary(self, min_prec: int) -> int:
        left = self.unary()
        while (prec := _BINARY_PREC.get(self.peek(), 0)) >= min_prec:
            op = self.toks[self.pos]
            self.pos += 1
            right = self.binary(prec + 1)
            left = _arith_apply(op, left, right)
        return left

    def unary(self) -> int:
        tok = self.peek()
        if tok in ("-", "+", "!", "~"):
            self.pos += 1
            value = self.unary()
            return {"-": -value, "+": value, "!": int(not value), "~": ~value}[tok]
        if tok == "(":
            self.pos += 1
            value = self.ternary()
            if self.peek() != ")":
                raise _ShellError("arithmetic syntax error")
            self.pos += 1
            return value
        if not tok:
            raise _ShellError("arithmetic syntax error")
        self.pos += 1
        if _NAME_RE.fullmatch(tok):
            return _arith_int(self.lookup(tok))
        return _arith_int(tok)


def _arith_apply(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise _ShellError("divide by zero")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if op == "/" else a - q * b
    table: dict[str, Callable[[int, int], int]] = {
        "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
        "<<": lambda x, y: x << y, ">>": lambda x, y: x >> y, "&": lambda x, y: x & y,
        "|": lambda x, y: x | y, "^": lambda x, y: x ^ y, "==": lambda x, y: int(x == y),
        "!=": lambda x, y: int(x != y), "<": lambda x, y: int(x < y), ">": lambda x, y: int(x > y),
        "<=": lambda x, y: int(x <= y), ">=": lambda x, y: int(x >= y),
        "&&": lambda x, y: int(bool(x) and bool(y)), "||": lambda x, y: int(bool(x) or bool(y)),
    }
    return table[op](a, b)


# ---------------------------------------------------------------------------------------------
# word expansion


@dataclass(frozen=True, slots=True)
class _Piece:
    """Part of an expanded word: `kind` is "lit" (unquoted source text: globbed, not split),
    "quoted" (neither), "exp" (unquoted expansion result: split and globbed) or "break" (a field
    boundary, between the words of "$@")."""

    text: str
    kind: str


_GLOB_CHARS = frozenset("*?[")


def _glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in _GLOB_CHARS else c for c in text)


def _has_glob(pattern: str) -> bool:
    return bool(re.search(r"(?<!\[)[*?]|\[(?![*?\[]\])", pattern))


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(fnmatch.translate(pattern), re.DOTALL)


@dataclass
class _Field:
    text: str = ""
    pattern: str = ""
    started: bool = False

    def add(self, text: str, active: bool) -> None:
        self.text += text
        self.pattern += text if active else _glob_escape(text)
        self.started = True


def _split_fields(pieces: list[_Piece], ifs: str) -> list[_Field]:
    """Field splitting (POSIX 2.6.5) of unquoted expansion results on $IFS."""
    fields: list[_Field] = []
    cur = _Field()
    ifs_white = "".join(c for c in ifs if c in " \t\n")
    for piece in pieces:
        if piece.kind == "break":
            fields.append(cur)
            cur = _Field()
        elif piece.kind == "exp" and ifs:
            for ch in piece.text:
                if ch in ifs:
                    if cur.started or ch not in ifs_white:
                        fields.append(cur)
                    cur = _Field()
                else:
                    cur.add(ch, True)
        else:
            cur.add(piece.text, piece.kind != "quoted")
    if cur.started:
        fields.append(cur)
    return fields


class _RedirError(Exception):
    """A redirection that cannot be done: the command does not run and its status is 1."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_LITERAL_RUN = re.compile(r"[^\\'\"`$~]+")
_DQ_LITERAL_RUN = re.compile(r"[^\\`$]+")
_SPECIAL_PARAMS = frozenset("?$#@*!-0")


def _dollar_end(raw: str, i: int) -> int:
    """Index after the expansion starting with the `$` at i, `$NAME`/`$1`/`$?` included."""
    end = _scan_dollar(raw, i)
    if end != i + 1:
        return end
    m = _NAME_RE.match(raw, i + 1)
    if m:
        return m.end()
    if i + 1 < len(raw) and (raw[i + 1].isdigit() or raw[i + 1] in _SPECIAL_PARAMS):
        return i + 2
    return end


Program = Callable[["_Proc"], Awaitable[int]]


@dataclass
class _Proc:
    """One run of a builtin or program: its argv, file descriptors and environment."""

    sh: _Shell
    argv: list[str]
    io: _IO
    env: dict[str, str]

    @property
    def name(self) -> str:
        return posixpath.basename(self.argv[0])

    @property
    def fs(self) -> _Fs:
        return self.sh.fs

    def path(self, p: str) -> str:
        return _norm(self.sh.cwd, p)

    async def out(self, data: bytes | str) -> None:
        await self.io.out(data)

    async def fail(self, message: str, status: int = 1) -> int:
        await self.io.err(f"{self.name}: {message}\n")
        return status


class _Shell:
    """The state of one shell process (ash's globals): variables, positional parameters, the
    working directory, functions, options, and the last status."""

    def __init__(self, ctx: ExecContext, fs: _Fs, env: dict[str, str], cwd: str, arg0: str,
                 params: list[str], commandname: str | None = None) -> None:
        self.ctx = ctx
        self.fs = fs
        self.vars: dict[str, str] = dict(env)
        self.exported: set[str] = set(env)
        self.cwd = cwd
        self.arg0 = arg0
        self.params = params
        self.commandname = commandname
        self.status = 0
        self.functions: dict[str, _Node] = {}
        self.errexit = False
        self.xtrace = False
        self.condition_depth = 0
        self.pid = next(_pids)
        self.last_bg = ""
        self.bg_tasks: list[asyncio.Task[int]] = []
        self.lineno = 0
        self.line_base = 0
        self.subst_status: int | None = None

    def clone(self) -> _Shell:
        """A subshell: a copy whose changes do not reach this shell."""
        sub = _Shell(self.ctx, self.fs, {}, self.cwd, self.arg0, list(self.params), self.commandname)
        sub.vars = dict(self.vars)
        sub.exported = set(self.exported)
        sub.functions = dict(self.functions)
        sub.status, sub.errexit, sub.xtrace, sub.pid = self.status, self.errexit, self.xtrace, self.pid
        sub.lineno, sub.line_base, sub.last_bg = self.lineno, self.line_base, self.last_bg
        sub.bg_tasks = self.bg_tasks
        return sub

    # ---- variables

    def environ(self) -> dict[str, str]:
        return {k: v for k, v in self.vars.items() if k in self.exported}

    def setvar(self, name: str, value: str, export: bool = False) -> None:
        self.vars[name] = value
        if export:
            self.exported.add(name)

    def param(self, name: str) -> str | None:
        if name == "?":
            return str(self.status)
        if name == "$":
            return str(self.pid)
        if name == "#":
            return str(len(self.params))
        if name == "!":
            return self.last_bg
        if name == "-":
            return ("e" if self.errexit else "") + ("x" if self.xtrace else "")
        if name == "0":
            return self.arg0
        if name.isdigit():
            k = int(name)
            return self.params[k - 1] if 0 < k <= len(self.params) else None
        if name in ("@", "*"):
            return " ".join(self.params)
        return self.vars.get(name)

    def arith_var(self, name: str) -> str:
        return self.vars.get(name, "")

    async def msg(self, io: _IO, text: str) -> None:
        """An error of the shell itself, as ash prints it: `sh: [line N: ]TEXT`."""
        line = f"line {self.lineno}: " if self.commandname else ""
        await io.err(f"{self.arg0}: {line}{text}\n")

    # ---- expansion

    async def pieces(self, raw: str, io: _IO, dq: bool = False) -> list[_Piece]:
        """The word's expansions (POSIX 2.6): tilde, parameters, command substitution,
        arithmetic, with the quoting of every part kept for splitting and globbing."""
        out: list[_Piece] = []
        i, n = 0, len(raw)
        lit_kind = "quoted" if dq else "lit"
        while i < n:
            c = raw[i]
            m = (_DQ_LITERAL_RUN if dq else _LITERAL_RUN).match(raw, i)
            if m or (dq and c in "'~\""):
                end = m.end() if m else i + 1
                out.append(_Piece(raw[i:end], lit_kind))
                i = end
            elif c == "\\":
                nxt = raw[i + 1:i + 2]
                if dq and nxt not in ("$", "`", '"', "\\", "\n"):
                    out.append(_Piece("\\", "quoted"))
                    i += 1
                    continue
                if nxt != "\n":
                    out.append(_Piece(nxt, "quoted"))
                i += 2
            elif c == "'":
                j = _scan_squote(raw, i + 1)
                out.append(_Piece(raw[i + 1:j - 1], "quoted"))
                i = j
            elif c == '"':
                j = _scan_dquote(raw, i + 1)
                inner = raw[i + 1:j - 1]
                if not (inner in ("$@", "${@}") and not self.params):
                    out.append(_Piece("", "quoted"))
                    out.extend(await self.pieces(inner, io, dq=True))
                i = j
            elif c == "`":
                j = _scan_backquote(raw, i + 1)
                body = re.sub(r"\\([$`\\])", r"\1", raw[i + 1:j - 1])
                out.append(_Piece(await self.command_subst(body, io), "quoted" if dq else "exp"))
                i = j
            elif c == "$":
                j = _dollar_end(raw, i)
                out.extend(await self.dollar(raw[i:j], io, dq))
                i = j
            else:  # "~" at the start of a word
                m2 = re.match(r"~([^/]*)", raw[i:])
                if i == 0 and m2 is not None and m2.group(1) == "":
                    out.append(_Piece(self.vars.get("HOME", "/"), "quoted"))
                else:
                    out.append(_Piece("~", lit_kind))
                i += 1
        return out

    async def dollar(self, text: str, io: _IO, dq: bool) -> list[_Piece]:
        kind = "quoted" if dq else "exp"
        if text == "$":
            return [_Piece("$", "quoted" if dq else "lit")]
        if text.startswith("$(("):
            expr = "".join(p.text for p in await self.pieces(text[3:-2], io, dq=True))
            return [_Piece(str(_Arith(expr, self.arith_var).evaluate()), kind)]
        if text.startswith("$("):
            return [_Piece(await self.command_subst(text[2:-1], io), kind)]
        if text.startswith("${"):
            return await self.brace(text[2:-1], io, dq)
        return self.simple_param(text[1:], dq)

    def simple_param(self, name: str, dq: bool) -> list[_Piece]:
        kind = "quoted" if dq else "exp"
        if name == "@" and dq:
            out: list[_Piece] = []
            for k, p in enumerate(self.params):
                if k:
                    out.append(_Piece("", "break"))
                out.append(_Piece(p, "quoted"))
            return out
        if name == "*" and dq:
            sep = self.vars.get("IFS", " \t\n")[:1]
            return [_Piece(sep.join(self.params), "quoted")]
        return [_Piece(self.param(name) or "", kind)]

    async def brace(self, inner: str, io: _IO, dq: bool) -> list[_Piece]:
        """${...}: the POSIX parameter expansion forms (2.6.2)."""
        kind = "quoted" if dq else "exp"
        if inner.startswith("#") and len(inner) > 1:
            name = inner[1:]
            if name in ("@", "*"):
                return [_Piece(str(len(self.params)), kind)]
            return [_Piece(str(len(self.param(name) or "")), kind)]
        m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|\d+|[@*#?$!0-]", inner)
        if m is None:
            raise _ShellError("syntax error: bad substitution")
        name, rest = m.group(0), inner[m.end():]
        if not rest:
            return self.simple_param(name, dq)
        value = self.param(name)
        op_m = re.match(r":?[-=+?]|##|#|%%|%", rest)
        if op_m is None:
            raise _ShellError("syntax error: bad substitution")
        op, word = op_m.group(0), rest[op_m.end():]
        if op[-1] in "-=+?" and op not in ("#", "##", "%", "%%"):
            unset = value is None or (op.startswith(":") and value == "")
            return await self.brace_default(name, op[-1], value, unset, word, io, dq)
        pattern = await self.expand_pattern(word, io)
        return [_Piece(_strip_pattern(value or "", op, pattern), kind)]

    async def brace_default(self, name: str, op: str, value: str | None, unset: bool, word: str,
                            io: _IO, dq: bool) -> list[_Piece]:
        kind = "quoted" if dq else "exp"
        if op == "-":
            return await self.pieces(word, io, dq) if unset else [_Piece(value or "", kind)]
        if op == "+":
            return [] if unset else await self.pieces(word, io, dq)
        if op == "=":
            if unset:
                value = await self.expand_str(word, io)
                self.setvar(name, value)
            return [_Piece(value or "", kind)]
        if unset:
            text = await self.expand_str(word, io)
            raise _ShellError(f"{name}: {text or 'parameter not set'}")
        return [_Piece(value or "", kind)]

    async def expand_str(self, raw: str, io: _IO) -> str:
        """A word expanded without field splitting or globbing (assignments, redirections)."""
        return "".join(" " if p.kind == "break" else p.text for p in await self.pieces(raw, io))

    async def expand_heredoc(self, body: str, io: _IO) -> str:
        """An unquoted here-document's body: parameters, substitutions, `\\$` `\\`` `\\\\`."""
        parts: list[str] = []
        for chunk in re.split(r'(\\")', body):
            parts.append(chunk if chunk == '\\"' else
                         "".join(p.text for p in await self.pieces(chunk, io, dq=True)))
        return "".join(parts)

    async def expand_pattern(self, raw: str, io: _IO) -> str:
        """A word expanded as a pattern: its quoted characters match literally."""
        parts = await self.pieces(raw, io)
        return "".join(p.text if p.kind in ("lit", "exp") else _glob_escape(p.text) for p in parts)

    async def expand_fields(self, raw: str, io: _IO) -> list[str]:
        """A command word expanded into fields: expansions, field splitting, globbing."""
        fields = _split_fields(await self.pieces(raw, io), self.vars.get("IFS", " \t\n"))
        out: list[str] = []
        for f in fields:
            matches = self.glob(f.pattern) if _has_glob(f.pattern) else []
            out.extend(matches or [f.text])
        return out

    def glob(self, pattern: str) -> list[str]:
        """Pathname expansion (POSIX 2.6.6) against the simulated filesystem."""
        candidates = ["/" if pattern.startswith("/") else ""]
        for part in [p for p in pattern.split("/") if p]:
            nxt: list[str] = []
            for base in candidates:
                real = _norm(self.cwd, base or ".")
                if _has_glob(part):
                    rx = _pattern_regex(part)
                    names = [n for n in self.fs.children(real)
                             if rx.fullmatch(n) and (part.startswith(".") or not n.startswith("."))]
                else:
                    names = [re.sub(r"\[([*?\[])\]", r"\1", part)]
                nxt.extend(base + ("" if not base or base.endswith("/") else "/") + n for n in names)
            candidates = [c for c in nxt if self.fs.exists(_norm(self.cwd, c))]
        return sorted(candidates) if candidates != ["/"] else []

    async def command_subst(self, script: str, io: _IO) -> str:
        """$(...): the script's output, run in a subshell, without its trailing newlines."""
        buf = _BufferSink()
        self.subst_status = await self.clone().run_script(script, io.replace(1, buf))
        return _s(bytes(buf.data)).rstrip("\n")

    # ---- running

    async def run_script(self, script: str, io: _IO) -> int:
        """Run a whole script text in this shell (`eval`, `$(...)`); `exit` ends it."""
        try:
            tree = _parse(script)
        except (_Incomplete, _SyntaxError) as e:
            await self.msg(io, e.message)
            return 2
        try:
            return await self.run_list(tree, io)
        except _ShellExit as e:
            return e.status
        except _ShellError as e:
            await self.msg(io, e.message)
            return e.status

    async def run_source(self, source: _Reader, io: _IO, interactive: bool = False) -> int:
        """Read the script from `source` chunk by chunk, running every complete command as
        soon as it has arrived (ash's cmdloop); at EOF, the rest. Returns the exit status.
        An interactive shell prompts on stderr before each read (PS1, or PS2 mid-command)."""
        buf = ""
        try:
            while True:
                if interactive:
                    await io.err(self.prompt(buf))
                chunk = await source.read()
                if not chunk:
                    if buf.strip():
                        await self.run_text(buf, io, final=True)
                    break
                buf = await self.run_complete(buf + _s(chunk), io)
        except _ShellExit as e:
            self.status = e.status
        await self.wait_background()
        return self.status

    def prompt(self, pending: str) -> str:
        """PS1 (busybox's default `\\w \\$ `: the directory, `~` for $HOME, then `#` for root)
        or, inside an unfinished command, PS2."""
        if pending.strip():
            return self.vars.get("PS2", "> ")
        home = self.vars.get("HOME", "")
        cwd = self.cwd
        if home and home != "/" and (cwd == home or cwd.startswith(home + "/")):
            cwd = "~" + cwd[len(home):]
        text = self.vars.get("PS1", "\\w \\$ ")
        return text.replace("\\w", cwd).replace("\\$", "#" if self.ctx.uid == 0 else "$")

    async def wait_background(self) -> None:
        """Background jobs still hold the exec's output open, as their process would: the exec
        ends when they do (they are cancelled if the exec is)."""
        try:
            await asyncio.gather(*self.bg_tasks, return_exceptions=True)
        finally:
            for task in self.bg_tasks:
                task.cancel()

    async def run_complete(self, buf: str, io: _IO) -> str:
        """Run the complete commands at the start of `buf`; return what is left."""
        start = 0
        while (idx := buf.find("\n", start)) >= 0:
            if await self.run_text(buf[:idx + 1], io, final=False):
                buf, start = buf[idx + 1:], 0
            else:
                start = idx + 1
        return buf

    async def run_text(self, text: str, io: _IO, final: bool) -> bool:
        """Parse and run `text`; False if it is not complete yet (and not `final`)."""
        try:
            tree = _parse(text)
        except _Incomplete as e:
            if not final:
                return False
            await self.msg(io, e.message)
            raise _ShellExit(2) from None
        except _SyntaxError as e:
            await self.msg(io, e.message)
            raise _ShellExit(2) from None
        try:
            await self.run_list(tree, io)
        except _ShellError as e:
            await self.msg(io, e.message)
            raise _ShellExit(e.status) from None
        except _LoopControl:
            pass
        except _Return as r:
            self.status = r.status
        self.line_base += text.count("\n")
        return True

    async def run_list(self, lst: _List, io: _IO) -> int:
        for and_or, background in lst.items:
            if background:
                self.spawn(and_or, io)
            else:
                await self.run_and_or(and_or, io)
        return self.status

    def spawn(self, and_or: _AndOr, io: _IO) -> None:
        """`cmd &`: run in a subshell alongside; `wait` waits for it."""
        sub = self.clone()

        async def job() -> int:
            try:
                return await sub.run_and_or(and_or, io)
            except _ShellExit as e:
                return e.status
            except (_BrokenPipe, _LoopControl, _Return, _ShellError):
                return 1

        self.bg_tasks.append(asyncio.ensure_future(job()))
        self.last_bg = str(next(_pids))
        self.status = 0

    async def run_and_or(self, and_or: _AndOr, io: _IO) -> int:
        steps = [("", and_or.first), *and_or.rest]
        status = 0
        for k, (op, pipeline) in enumerate(steps):
            if k and (op == "&&") != (status == 0):
                continue
            last = k == len(steps) - 1
            self.condition_depth += 0 if last else 1
            try:
                status = await self.run_pipeline(pipeline, io)
            finally:
                self.condition_depth -= 0 if last else 1
        return status

    async def run_pipeline(self, pipeline: _Pipeline, io: _IO) -> int:
        if pipeline.negate:
            self.condition_depth += 1
        try:
            if len(pipeline.cmds) == 1:
                status = await self.run_command(pipeline.cmds[0], io)
            else:
                status = await self.run_stages(pipeline.cmds, io)
        finally:
            if pipeline.negate:
                self.condition_depth -= 1
        if pipeline.negate:
            status = int(status == 0)
        self.status = status
        if self.errexit and status and not pipeline.negate and self.condition_depth == 0:
            raise _ShellExit(status)
        return status

    async def run_stages(self, cmds: tuple[_Node, ...], io: _IO) -> int:
        """A pipeline: every stage a subshell, run concurrently, connected by pipes."""
        pipes = [_Pipe() for _ in cmds[1:]]

        async def stage(k: int) -> int:
            in_pipe = pipes[k - 1] if k else None
            out_pipe = pipes[k] if k < len(pipes) else None
            stage_io = io
            if in_pipe is not None:
                stage_io = stage_io.replace(0, _PipeReader(in_pipe))
            if out_pipe is not None:
                stage_io = stage_io.replace(1, _PipeSink(out_pipe))
            sub = self.clone()
            try:
                return await sub.run_command(cmds[k], stage_io)
            except _ShellExit as e:
                return e.status
            except _BrokenPipe:
                return SIGPIPE_STATUS
            except _ShellError as e:
                await sub.msg(stage_io, e.message)
                return e.status
            except (_LoopControl, _Return):
                return 0
            finally:
                if out_pipe is not None:
                    await out_pipe.close_write()
                if in_pipe is not None:
                    in_pipe.close_read()

        statuses = await asyncio.gather(*(stage(k) for k in range(len(cmds))))
        return statuses[-1]

    async def run_command(self, node: _Node, io: _IO) -> int:
        await self.fs.pace()
        if isinstance(node, _Simple):
            status = await self.run_simple(node, io)
        elif isinstance(node, _FuncDef):
            self.functions[node.name] = node.body
            status = 0
        else:
            try:
                cio = await self.redirect(node.redirs, io)
            except _RedirError as e:
                await self.msg(io, e.message)
                return 1
            status = await self.run_compound(node, cio)
        self.status = status
        return status

    async def run_compound(self, node: _If | _While | _For | _Case | _Group, io: _IO) -> int:
        if isinstance(node, _If):
            return await self.run_if(node, io)
        if isinstance(node, _While):
            return await self.run_while(node, io)
        if isinstance(node, _For):
            return await self.run_for(node, io)
        if isinstance(node, _Case):
            return await self.run_case(node, io)
        if not node.subshell:
            return await self.run_list(node.body, io)
        sub = self.clone()
        try:
            return await sub.run_list(node.body, io)
        except _ShellExit as e:
            return e.status

    async def run_condition(self, cond: _List, io: _IO) -> int:
        self.condition_depth += 1
        try:
            return await self.run_list(cond, io)
        finally:
            self.condition_depth -= 1

    async def run_if(self, node: _If, io: _IO) -> int:
        for cond, body in node.branches:
            if await self.run_condition(cond, io) == 0:
                return await self.run_list(body, io)
        if node.else_ is not None:
            return await self.run_list(node.else_, io)
        return 0

    async def run_body(self, body: _List, io: _IO) -> tuple[int, bool]:
        """One loop iteration: (status, whether to stop the loop)."""
        try:
            return await self.run_list(body, io), False
        except _LoopControl as lc:
            if lc.levels > 1:
                lc.levels -= 1
                raise
            return 0, lc.kind == "break"

    async def run_while(self, node: _While, io: _IO) -> int:
        status = 0
        while True:
            await self.fs.pace()
            if (await self.run_condition(node.cond, io) == 0) == node.until:
                break
            status, stop = await self.run_body(node.body, io)
            if stop:
                break
        return status

    async def run_for(self, node: _For, io: _IO) -> int:
        if node.words is None:
            values = list(self.params)
        else:
            values = []
            for w in node.words:
                values.extend(await self.expand_fields(w, io))
        status = 0
        for value in values:
            await self.fs.pace()
            self.setvar(node.var, value)
            status, stop = await self.run_body(node.body, io)
            if stop:
                break
        return status

    async def run_case(self, node: _Case, io: _IO) -> int:
        word = await self.expand_str(node.word, io)
        for patterns, body in node.items:
            for pattern in patterns:
                if _pattern_regex(await self.expand_pattern(pattern, io)).fullmatch(word):
                    return await self.run_list(body, io)
        return 0

    async def run_simple(self, cmd: _Simple, io: _IO) -> int:
        self.lineno = self.line_base + cmd.line
        self.subst_status = None
        argv: list[str] = []
        for w in cmd.words:
            argv.extend(await self.expand_fields(w, io))
        assigns: list[tuple[str, str]] = []
        for a in cmd.assigns:
            name, raw = a.split("=", 1)
            assigns.append((name, await self.expand_str(raw, io)))
        if self.xtrace:
            words = [f"{n}={_xtrace_quote(v)}" for n, v in assigns] + [_xtrace_quote(a) for a in argv]
            await io.err("+ " + " ".join(words) + "\n")
        try:
            cio = await self.redirect(cmd.redirs, io)
        except _RedirError as e:
            await self.msg(io, e.message)
            return 1
        if not argv:
            for name, value in assigns:
                self.setvar(name, value)
            return self.subst_status if self.subst_status is not None else 0
        return await self.invoke(argv, assigns, cio)

    async def invoke(self, argv: list[str], assigns: list[tuple[str, str]], io: _IO) -> int:
        """Run a command by name: special builtin, function, builtin, then $PATH."""
        name = argv[0]
        special = SPECIAL_BUILTINS.get(name)
        if special is not None:
            for n, v in assigns:
                self.setvar(n, v)
            return await special(_Proc(self, argv, io, self.environ()))
        if name in self.functions:
            return await self.call_function(name, argv, assigns, io)
        env = self.environ()
        env.update(assigns)
        program = BUILTINS.get(name) or self.find_program(name, env.get("PATH"))
        if program is None:
            await self.msg(io, f"{name}: not found")
            return 127
        try:
            return await program(_Proc(self, argv, io, env))
        except _NoSpace:
            await io.err(f"{posixpath.basename(name)}: write error: No space left on device\n")
            return 1

    async def call_function(self, name: str, argv: list[str], assigns: list[tuple[str, str]],
                            io: _IO) -> int:
        saved = self.params
        self.params = argv[1:]
        for n, v in assigns:
            self.setvar(n, v)
        try:
            return await self.run_command(self.functions[name], io)
        except _Return as r:
            return r.status
        finally:
            self.params = saved

    def find_program(self, name: str, path: str | None) -> Program | None:
        """The program `name` names, through $PATH unless it has a slash (ash's find_command)."""
        if "/" in name:
            return self.program_at(_norm(self.cwd, name))
        for d in (DEFAULT_PATH if path is None else path).split(":"):
            found = self.program_at(_norm(self.cwd, d or ".") + "/" + name)
            if found is not None:
                return found
        return None

    def program_at(self, path: str) -> Program | None:
        base = posixpath.basename(path)
        if posixpath.dirname(path) in BIN_DIRS and base in APPLETS:
            return APPLETS[base]
        if path in self.fs.files:
            return _script_program(path)
        return None

    async def redirect(self, redirs: tuple[_Redir, ...], io: _IO) -> _IO:
        """Apply redirections (POSIX 2.7) to a copy of `io`."""
        if not redirs:
            return io
        fds = dict(io.fds)
        for r in redirs:
            if r.op in ("<<", "<<q"):
                text = r.target if r.op == "<<q" else await self.expand_heredoc(r.target, io)
                fds[0 if r.fd is None else r.fd] = _BytesReader(_b(text))
                continue
            target = await self.expand_str(r.target, io)
            if r.op in (">&", "<&"):
                fd = r.fd if r.fd is not None else (1 if r.op == ">&" else 0)
                if target == "-":
                    fds.pop(fd, None)
                elif target.isdigit():
                    if int(target) not in fds:
                        raise _RedirError(f"{target}: Bad file descriptor")
                    fds[fd] = fds[int(target)]
                elif r.op == ">&" and r.fd is None:
                    fds[1] = fds[2] = self.open_write(target, False, fds)
                else:
                    raise _RedirError(f"{target}: Bad file descriptor")
            elif r.op in ("&>", "&>>"):
                fds[1] = fds[2] = self.open_write(target, r.op == "&>>", fds)
            elif r.op in (">", ">|", ">>"):
                fds[1 if r.fd is None else r.fd] = self.open_write(target, r.op == ">>", fds)
            else:
                fds[0 if r.fd is None else r.fd] = self.open_read(target, fds, create=r.op == "<>")
        return _IO(fds)

    def open_write(self, target: str, append: bool, fds: dict[int, _Fd]) -> _Sink:
        path = _norm(self.cwd, target)
        if path in ("/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2"):
            fd = fds.get(2 if path.endswith(("err", "2")) else 1)
            return fd if isinstance(fd, _Sink) else _Sink()
        if path.startswith("/dev/"):
            return _Sink()
        if self.fs.is_dir(path):
            raise _RedirError(f"can't create {target}: Is a directory")
        if posixpath.dirname(path) not in self.fs.dirs():
            raise _RedirError(f"can't create {target}: nonexistent directory")
        if self.fs.read_only(path):
            raise _RedirError(f"can't create {target}: Read-only file system")
        if not append or path not in self.fs.files:
            self.fs.files[path] = b""
        return _FileSink(self.fs.files, path)

    def open_read(self, target: str, fds: dict[int, _Fd], create: bool = False) -> _Reader:
        path = _norm(self.cwd, target)
        if path in ("/dev/stdin", "/dev/fd/0"):
            fd = fds.get(0)
            return fd if isinstance(fd, _Reader) else _BytesReader(b"")
        if path.startswith("/dev/") or self.fs.is_dir(path):
            return _BytesReader(b"")
        if path not in self.fs.files:
            if not create:
                raise _RedirError(f"can't open {target}: no such file")
            self.open_write(target, True, fds)
        return _BytesReader(self.fs.read(path))


def _xtrace_quote(word: str) -> str:
    """An argument as `set -x` prints it (ash's maybe_single_quote): bare unless it has a
    character the shell would treat specially."""
    if not word or not re.search(r"[\x00-\x2a;<=>?`\[\\{|}~\x7f-\U0010ffff]", word):
        return word
    return _shell_quote(word)


def _strip_pattern(value: str, op: str, pattern: str) -> str:
    """${V#p} ${V##p} ${V%p} ${V%%p}: remove the shortest/longest matching prefix/suffix."""
    rx = _pattern_regex(pattern)
    n = len(value)
    if op in ("#", "##"):
        order = range(n + 1) if op == "#" else range(n, -1, -1)
        for k in order:
            if rx.fullmatch(value[:k]):
                return value[k:]
        return value
    order = range(n, -1, -1) if op == "%" else range(n + 1)
    for k in order:
        if rx.fullmatch(value[k:]):
            return value[:k]
    return value


def _script_program(path: str) -> Program:
    """A file in the image run as a program: a shell script (ash runs a file without a known
    binary format as one)."""

    async def run(p: _Proc) -> int:
        return await _sh(_Proc(p.sh, ["sh", path, *p.argv[1:]], p.io, p.env))

    return run


# ---------------------------------------------------------------------------------------------
# shell builtins


async def _sh(p: _Proc) -> int:
    """sh/ash/bash: `-c SCRIPT [NAME [ARGS...]]`, `SCRIPT-FILE [ARGS...]`, or the script read
    from stdin as it arrives (ash's procargs + cmdloop)."""
    args = p.argv[1:]
    command, errexit, xtrace, interactive, i = False, False, False, False, 0
    while i < len(args) and len(args[i]) > 1 and args[i][0] in "-+" and args[i] != "--":
        flag = args[i]
        i += 1
        if flag[1:] == "o":
            i += 1
            continue
        for ch in flag[1:]:
            if ch == "c":
                command = True
            elif ch == "e":
                errexit = flag[0] == "-"
            elif ch == "x":
                xtrace = flag[0] == "-"
            elif ch == "i":
                interactive = True
            elif ch not in "sluvnafC":
                return await p.fail(f"-{ch}: invalid option", 2)
    if i < len(args) and args[i] == "--":
        i += 1
    rest = args[i:]
    commandname: str | None = None
    arg0, params = p.argv[0], rest[1:]
    if command:
        if not rest:
            return await p.fail("-c requires an argument", 2)
        source: _Reader = _BytesReader(_b(rest[0]))
        if len(rest) > 1:
            arg0 = commandname = rest[1]
            params = rest[2:]
    elif rest:
        path = p.path(rest[0])
        if path not in p.fs.files:
            return await p.fail(f"can't open '{rest[0]}': No such file or directory", 2)
        source = _BytesReader(p.fs.read(path))
        arg0 = commandname = rest[0]
    else:
        source = p.io.stdin
        interactive = interactive or p.sh.ctx.tty
    env = dict(p.env)
    level = env.get("SHLVL", "0")
    env["SHLVL"] = str(int(level) + 1 if level.isdigit() else 1)
    env["PWD"] = p.sh.cwd
    sh = _Shell(p.sh.ctx, p.fs, env, p.sh.cwd, arg0, params, commandname)
    sh.errexit, sh.xtrace = errexit, xtrace
    return await sh.run_source(source, p.io, interactive and not command)


async def _exit(p: _Proc) -> int:
    if len(p.argv) < 2:
        raise _ShellExit(p.sh.status)
    arg = p.argv[1]
    if not re.fullmatch(r"-?\d+", arg):
        await p.sh.msg(p.io, f"exit: Illegal number: {arg}")
        raise _ShellExit(2)
    raise _ShellExit(int(arg) & 255)


async def _return(p: _Proc) -> int:
    raise _Return(int(p.argv[1]) & 255 if len(p.argv) > 1 and p.argv[1].isdigit() else p.sh.status)


async def _loop_control(p: _Proc) -> int:
    levels = int(p.argv[1]) if len(p.argv) > 1 and p.argv[1].isdigit() else 1
    raise _LoopControl(p.argv[0], max(levels, 1))


async def _colon(p: _Proc) -> int:
    return 0


async def _false(p: _Proc) -> int:
    return 1


async def _export(p: _Proc) -> int:
    names = [a for a in p.argv[1:] if a != "-p"]
    if not names:
        for k, v in sorted(p.sh.environ().items()):
            await p.out(f"export {k}={_shell_quote(v)}\n")
        return 0
    for a in names:
        name, eq, value = a.partition("=")
        if eq:
            p.sh.setvar(name, value, export=True)
        else:
            p.sh.exported.add(name)
    return 0


async def _readonly(p: _Proc) -> int:
    for a in p.argv[1:]:
        name, eq, value = a.partition("=")
        if eq:
            p.sh.setvar(name, value)
    return 0


def _shell_quote(value: str) -> str:
    return "'" + value.replace("'", "'\"'\"'") + "'"


async def _unset(p: _Proc) -> int:
    functions = "-f" in p.argv[1:]
    for name in p.argv[1:]:
        if name.startswith("-"):
            continue
        if functions:
            p.sh.functions.pop(name, None)
        else:
            p.sh.vars.pop(name, None)
            p.sh.exported.discard(name)
    return 0


async def _set(p: _Proc) -> int:
    args = p.argv[1:]
    if not args:
        for k, v in sorted(p.sh.vars.items()):
            await p.out(f"{k}={_shell_quote(v)}\n")
        return 0
    while args and args[0][:1] in ("-", "+") and args[0] != "--":
        flag = args.pop(0)
        if flag[1:] == "o" and args:
            args.pop(0)
        else:
            p.sh.errexit = flag[0] == "-" if "e" in flag else p.sh.errexit
            p.sh.xtrace = flag[0] == "-" if "x" in flag else p.sh.xtrace
    if args and args[0] == "--":
        args.pop(0)
        p.sh.params = args
    elif args:
        p.sh.params = args
    return 0


async def _shift(p: _Proc) -> int:
    n = int(p.argv[1]) if len(p.argv) > 1 and p.argv[1].isdigit() else 1
    if n > len(p.sh.params):
        await p.sh.msg(p.io, "shift: can't shift that many")
        return 2
    p.sh.params = p.sh.params[n:]
    return 0


async def _eval(p: _Proc) -> int:
    return await _run_inline(p, " ".join(p.argv[1:]))


async def _dot(p: _Proc) -> int:
    if len(p.argv) < 2:
        return 0
    path = p.path(p.argv[1])
    if path not in p.fs.files:
        await p.sh.msg(p.io, f"{p.argv[1]}: not found")
        raise _ShellExit(2)
    return await _run_inline(p, _s(p.fs.read(path)))


async def _run_inline(p: _Proc, script: str) -> int:
    """Run script text in the current shell (`eval`, `.`): its changes stay."""
    try:
        tree = _parse(script)
    except (_Incomplete, _SyntaxError) as e:
        await p.sh.msg(p.io, e.message)
        return 2
    return await p.sh.run_list(tree, p.io)


async def _exec(p: _Proc) -> int:
    if len(p.argv) < 2:
        return 0
    raise _ShellExit(await p.sh.invoke(p.argv[1:], [], p.io))


async def _wait(p: _Proc) -> int:
    status = 0
    for task in p.sh.bg_tasks:
        status = await task
    p.sh.bg_tasks.clear()
    return status


async def _cd(p: _Proc) -> int:
    sh = p.sh
    target = p.argv[1] if len(p.argv) > 1 else sh.vars.get("HOME", "/")
    if target == "-":
        target = sh.vars.get("OLDPWD", sh.cwd)
        await p.out(target + "\n")
    path = _norm(sh.cwd, target)
    if not p.fs.is_dir(path):
        reason = "Not a directory" if p.fs.is_file(path) else "No such file or directory"
        await sh.msg(p.io, f"cd: can't cd to {target}: {reason}")
        return 2
    sh.setvar("OLDPWD", sh.cwd)
    sh.cwd = path
    sh.setvar("PWD", path)
    return 0


async def _pwd(p: _Proc) -> int:
    await p.out(p.sh.cwd + "\n")
    return 0


async def _read(p: _Proc) -> int:
    """read [-r] [-p PROMPT] NAME...: one line of stdin into the variables."""
    args = p.argv[1:]
    raw = False
    while args and args[0].startswith("-") and len(args[0]) > 1:
        flag = args.pop(0)
        raw = raw or "r" in flag
        if flag == "-p" and args:
            args.pop(0)
    names = args or ["REPLY"]
    line = await p.io.stdin.read_line()
    if not line:
        for name in names:
            p.sh.setvar(name, "")
        return 1
    text = _s(line).rstrip("\n")
    if not raw:
        text = re.sub(r"\\(.)", r"\1", text)
    ifs = p.sh.vars.get("IFS", " \t\n")
    parts = text.strip(ifs).split(None, len(names) - 1) if ifs else [text]
    for k, name in enumerate(names):
        p.sh.setvar(name, parts[k] if k < len(parts) else "")
    return 0 if line.endswith(b"\n") else 1


async def _local(p: _Proc) -> int:
    for a in p.argv[1:]:
        name, _, value = a.partition("=")
        p.sh.setvar(name, value)
    return 0


async def _command(p: _Proc) -> int:
    args = p.argv[1:]
    if args[:1] == ["-v"] or args[:1] == ["-V"]:
        status = 0
        for name in args[1:]:
            if name in BUILTINS or name in SPECIAL_BUILTINS or name in p.sh.functions:
                await p.out(name + "\n")
            elif (path := _which(p, name)) is not None:
                await p.out(path + "\n")
            else:
                status = 1
        return status
    if not args:
        return 0
    return await p.sh.invoke(args, [], p.io)


def _which(p: _Proc, name: str) -> str | None:
    if "/" in name:
        path = p.path(name)
        return path if p.sh.program_at(path) is not None else None
    for d in p.env.get("PATH", DEFAULT_PATH).split(":"):
        path = _norm(p.sh.cwd, d or ".") + "/" + name
        if p.sh.program_at(path) is not None:
            return path
    return None


async def _kill(p: _Proc) -> int:
    args = [a for a in p.argv[1:] if not a.startswith("-")]
    if not args:
        return await p.fail("usage: kill [-s SIGNAL | -SIGNAL] PID...", 1)
    for pid in args:
        await p.sh.msg(p.io, f"kill: can't kill pid {pid}: No such process")
    return 1


# ---------------------------------------------------------------------------------------------
# programs (busybox applets)

_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}


def _unescape(text: str, octal_zero: bool) -> tuple[str, bool]:
    """Backslash escapes of `echo -e` / printf %b (octal as \\0NNN) or a printf format (\\NNN);
    returns the text and whether \\c stopped the output."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "c":
            return "".join(out), True
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt == "x" and (m := re.match(r"[0-9a-fA-F]{1,2}", text[i + 2:])):
            out.append(chr(int(m.group(0), 16)))
            i += 2 + m.end()
        elif nxt.isdigit() and nxt in "01234567":
            start = i + 2 if octal_zero and nxt == "0" else i + 1
            m2 = re.match(r"[0-7]{1,3}", text[start:])
            digits = m2.group(0) if m2 else "0"
            out.append(chr(int(digits, 8) & 0xFF))
            i = start + (m2.end() if m2 else 0)
        else:
            out.append("\\" + nxt)
            i += 2
    return "".join(out), False


async def _echo(p: _Proc) -> int:
    """busybox echo: -n (no newline), -e (escapes), -E."""
    args = p.argv[1:]
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        flag = args.pop(0)
        newline = newline and "n" not in flag
        escapes = ("e" in flag) if ("e" in flag or "E" in flag) else escapes
    text = " ".join(args)
    stopped = False
    if escapes:
        text, stopped = _unescape(text, octal_zero=True)
    await p.out(text + ("\n" if newline and not stopped else ""))
    return 0


_PRINTF_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?([diouxXcsbfeEgG%])")


def _printf_number(p: _Proc, arg: str, errors: list[str]) -> int:
    if not arg:
        return 0
    if arg[0] in "'\"":
        return ord(arg[1]) if len(arg) > 1 else 0
    try:
        return int(arg, 0) if not re.fullmatch(r"[-+]?0\d+", arg) else int(arg, 8)
    except ValueError:
        errors.append(f"invalid number '{arg}'")
        return 0


def _printf_once(p: _Proc, fmt: str, args: list[str], errors: list[str]) -> tuple[str, bool]:
    """One pass of the format over (a prefix of) the arguments; consumes from `args`."""
    out: list[str] = []
    pos = 0
    for m in _PRINTF_SPEC.finditer(fmt):
        text, stop = _unescape(fmt[pos:m.start()], octal_zero=False)
        out.append(text)
        if stop:
            return "".join(out), True
        pos = m.end()
        flags, width, prec, conv = m.groups()
        if conv == "%":
            out.append("%")
            continue
        if width == "*":
            width = str(_printf_number(p, args.pop(0) if args else "", errors))
        if prec == "*":
            prec = str(_printf_number(p, args.pop(0) if args else "", errors))
        spec = "%" + flags + (width or "") + (f".{prec}" if prec is not None else "")
        arg = args.pop(0) if args else ""
        if conv in "sb":
            if conv == "b":
                arg, stop = _unescape(arg, octal_zero=True)
            out.append((spec + "s") % arg)
            if conv == "b" and stop:
                return "".join(out), True
        elif conv == "c":
            out.append((spec + "s") % arg[:1])
        elif conv in "diouxX":
            n = _printf_number(p, arg, errors)
            out.append((spec + ("d" if conv in "iu" else conv)) % n)
        else:
            try:
                value = float(arg) if arg else 0.0
            except ValueError:
                errors.append(f"invalid number '{arg}'")
                value = 0.0
            out.append((spec + conv) % value)
    text, stop = _unescape(fmt[pos:], octal_zero=False)
    out.append(text)
    return "".join(out), stop


async def _printf(p: _Proc) -> int:
    """printf FORMAT [ARG...]: the format is reused while arguments remain."""
    if len(p.argv) < 2:
        return await p.fail("usage: printf FORMAT [ARGUMENT...]", 1)
    fmt, args = p.argv[1], p.argv[2:]
    errors: list[str] = []
    consumes = bool(_PRINTF_SPEC.search(fmt.replace("%%", "")))
    while True:
        text, stop = _printf_once(p, fmt, args, errors)
        await p.out(text)
        if stop or not args or not consumes:
            break
    for e in errors:
        await p.io.err(f"{p.name}: {e}\n")
    return 1 if errors else 0


_UNARY_TESTS = frozenset("-e -f -d -s -r -w -x -z -n -L -h -b -c -p -S -t -g -u -k -O -G".split())
_BINARY_TESTS = frozenset("= == != -eq -ne -lt -le -gt -ge -nt -ot -ef < >".split())


class _TestError(Exception):
    pass


class _Test:
    """test/[ expressions (POSIX test, with -a/-o/!/parentheses)."""

    def __init__(self, p: _Proc, args: list[str]) -> None:
        self.p = p
        self.args = args
        self.pos = 0

    def run(self) -> bool:
        if not self.args:
            return False
        value = self.or_()
        if self.pos != len(self.args):
            raise _TestError(f"{self.args[self.pos]}: unknown operand")
        return value

    def or_(self) -> bool:
        value = self.and_()
        while self.pos < len(self.args) and self.args[self.pos] == "-o":
            self.pos += 1
            value = self.and_() or value
        return value

    def and_(self) -> bool:
        value = self.not_()
        while self.pos < len(self.args) and self.args[self.pos] == "-a":
            self.pos += 1
            value = self.not_() and value
        return value

    def not_(self) -> bool:
        if self.pos < len(self.args) - 1 and self.args[self.pos] == "!":
            self.pos += 1
            return not self.not_()
        return self.primary()

    def primary(self) -> bool:
        a = self.args
        if self.pos >= len(a):
            raise _TestError("argument expected")
        tok = a[self.pos]
        if self.pos + 2 < len(a) + 0 and a[self.pos + 1] in _BINARY_TESTS:
            self.pos += 3
            return self.binary(tok, a[self.pos - 2], a[self.pos - 1])
        if tok == "(" and self.pos + 1 < len(a):
            self.pos += 1
            value = self.or_()
            if self.pos >= len(a) or a[self.pos] != ")":
                raise _TestError("missing )")
            self.pos += 1
            return value
        if tok in _UNARY_TESTS and self.pos + 1 < len(a):
            self.pos += 2
            return self.unary(tok, a[self.pos - 1])
        self.pos += 1
        return tok != ""

    def unary(self, op: str, arg: str) -> bool:
        fs = self.p.fs
        path = self.p.path(arg) if arg else ""
        checks: dict[str, Callable[[], bool]] = {
            "-z": lambda: arg == "", "-n": lambda: arg != "",
            "-e": lambda: bool(arg) and fs.exists(path), "-f": lambda: bool(arg) and fs.is_file(path),
            "-d": lambda: bool(arg) and fs.is_dir(path),
            "-s": lambda: bool(arg) and (fs.is_dir(path) or bool(fs.read(path))),
            "-r": lambda: bool(arg) and fs.exists(path), "-w": lambda: bool(arg) and fs.exists(path),
            "-x": lambda: bool(arg) and (fs.is_dir(path) or self.p.sh.program_at(path) is not None),
            "-c": lambda: path in ("/dev/null", "/dev/zero"),
        }
        return checks.get(op, lambda: False)()

    def binary(self, left: str, op: str, right: str) -> bool:
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        if op in ("<", ">"):
            return left < right if op == "<" else left > right
        if op in ("-nt", "-ot", "-ef"):
            return False
        a, b = self._int(left), self._int(right)
        return {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[op]

    @staticmethod
    def _int(text: str) -> int:
        if not re.fullmatch(r"\s*[-+]?\d+\s*", text):
            raise _TestError(f"invalid number '{text}'")
        return int(text)


async def _test(p: _Proc) -> int:
    args = p.argv[1:]
    if p.name == "[":
        if not args or args[-1] != "]":
            await p.sh.msg(p.io, "[: missing ]")
            return 2
        args = args[:-1]
    try:
        return 0 if _Test(p, args).run() else 1
    except _TestError as e:
        await p.sh.msg(p.io, f"{p.name}: {e}")
        return 2


async def _stream_stdin(p: _Proc) -> None:
    """Copy stdin to stdout chunk by chunk, as it arrives."""
    while chunk := await p.io.stdin.read():
        await p.out(chunk)


async def _cat(p: _Proc) -> int:
    files = [a for a in p.argv[1:] if a == "-" or not a.startswith("-")] or ["-"]
    status = 0
    for name in files:
        if name == "-":
            await _stream_stdin(p)
            continue
        path = p.path(name)
        if p.fs.is_dir(path):
            status = await p.fail("read error: Is a directory")
        elif not p.fs.is_file(path) and not path.startswith("/dev/"):
            status = await p.fail(f"can't open '{name}': No such file or directory")
        else:
            await p.out(p.fs.read(path))
    return status


async def _read_inputs(p: _Proc, names: list[str], applet_msg: str = "can't open '{}'") -> tuple[list[tuple[str, bytes]], int]:
    """The contents of the named files (stdin for none or `-`), and 1 if one was missing."""
    out: list[tuple[str, bytes]] = []
    status = 0
    for name in names or ["-"]:
        if name == "-":
            out.append(("-", await p.io.stdin.read_all()))
            continue
        path = p.path(name)
        if p.fs.is_file(path) or path in ("/dev/null", "/dev/zero"):
            out.append((name, p.fs.read(path)))
        else:
            status = await p.fail(applet_msg.format(name) + ": No such file or directory")
    return out, status


def _split_opts(args: list[str], with_value: str = "") -> tuple[set[str], dict[str, str], list[str]]:
    """getopt: single-letter flags (combinable), options taking a value, and operands."""
    flags: set[str] = set()
    values: dict[str, str] = {}
    operands: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            operands.extend(args[i:])
            break
        if not a.startswith("-") or a == "-":
            operands.append(a)
            continue
        for k, ch in enumerate(a[1:], start=1):
            if ch in with_value:
                if a[k + 1:]:
                    values[ch] = a[k + 1:]
                elif i < len(args):
                    values[ch] = args[i]
                    i += 1
                break
            flags.add(ch)
    return flags, values, operands


def _ls_long(p: _Proc, path: str, name: str) -> str:
    is_dir = p.fs.is_dir(path)
    mode = "drwxr-xr-x" if is_dir else ("-rwxr-xr-x" if posixpath.dirname(path) in BIN_DIRS else "-rw-r--r--")
    size = 4096 if is_dir else len(p.fs.read(path))
    mtime = time.gmtime(p.sh.ctx.started)
    when = time.strftime("%b ", mtime) + f"{mtime.tm_mday:2d} " + time.strftime("%H:%M", mtime)
    return f"{mode} {2 if is_dir else 1:4d} {'root':<8} {'root':<8} {size:9d} {when} {name}"


async def _ls(p: _Proc) -> int:
    """ls [-1laAd]: not a terminal, so one name per line, sorted."""
    flags, _, operands = _split_opts(p.argv[1:])
    status = 0
    targets = operands or ["."]
    files = [t for t in targets if p.fs.is_file(p.path(t)) or ("d" in flags and p.fs.exists(p.path(t)))]
    dirs = [t for t in targets if t not in files and p.fs.is_dir(p.path(t))]
    for t in targets:
        if t not in files and t not in dirs:
            status = await p.fail(f"{t}: No such file or directory")
    for t in sorted(files):
        await p.out((_ls_long(p, p.path(t), t) if "l" in flags else t) + "\n")
    for k, t in enumerate(sorted(dirs)):
        if len(targets) > 1:
            await p.out(("\n" if k or files else "") + f"{t}:\n")
        names = p.fs.children(p.path(t))
        if "a" in flags:
            names = [".", "..", *names]
        elif "A" not in flags:
            names = [n for n in names if not n.startswith(".")]
        lines = [(_ls_long(p, _norm(p.path(t), n), n) if "l" in flags else n) for n in names]
        if "l" in flags:
            lines.insert(0, f"total {len(names) * 4}")
        await p.out("".join(line + "\n" for line in lines))
    return status


def _strftime(fmt: str, when: float) -> str:
    """strftime in UTC, with %e %s %N %Z as busybox/glibc print them."""
    tm = time.gmtime(when)
    special: dict[str, Callable[[], str]] = {
        "e": lambda: f"{tm.tm_mday:2d}", "s": lambda: str(int(when)), "Z": lambda: "UTC", "z": lambda: "+0000",
        "N": lambda: f"{int((when % 1) * 1e9):09d}", "k": lambda: f"{tm.tm_hour:2d}",
        "l": lambda: f"{(tm.tm_hour % 12) or 12:2d}", "P": lambda: "am" if tm.tm_hour < 12 else "pm",
    }

    def one(m: re.Match[str]) -> str:
        ch = m.group(1)
        if ch == "%":
            return "%"
        if ch in special:
            return special[ch]()
        return time.strftime("%" + ch, tm)

    return re.sub(r"%([a-zA-Z%])", one, fmt)


# the operand forms busybox date accepts for setting the clock: MMDDhhmm[[CC]YY][.ss],
# hh:mm[:ss], [YYYY-]MM-DD hh:mm[:ss], YYYY-MM-DD, @SECONDS
_SETTABLE_DATE = re.compile(r"\d{8}(\d{2}){0,2}(\.\d{2})?|\d{1,2}:\d{2}(:\d{2})?|"
                            r"(\d{4}-)?\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2})?)?|@-?\d+")


async def _date(p: _Proc) -> int:
    """date [-u] [-R] [-I] [-d @SECONDS] [+FORMAT]: busybox's default is `%a %b %e %H:%M:%S %Z %Y`."""
    flags, values, operands = _split_opts(p.argv[1:], with_value="d")
    when = p.sh.ctx.now()
    if "d" in values:
        spec = values["d"]
        if not re.fullmatch(r"@-?\d+(\.\d+)?", spec):
            return await p.fail(f"invalid date '{spec}'")
        when = float(spec[1:])
    fmt = "%a %b %e %H:%M:%S %Z %Y"
    if "R" in flags:
        fmt = "%a, %d %b %Y %H:%M:%S %z"
    elif "I" in flags:
        fmt = "%Y-%m-%d"
    for op in operands:
        if op.startswith("+"):
            fmt = op[1:]
        elif _SETTABLE_DATE.fullmatch(op):  # a date busybox parses; setting it needs CAP_SYS_TIME
            return await p.fail("can't set date: Operation not permitted")
        else:  # parse_datestr gives up first
            return await p.fail(f"invalid date '{op}'")
    await p.out(_strftime(fmt, int(when) if "%N" not in fmt else when) + "\n")
    return 0


_DD_SUFFIXES = {"c": 1, "w": 2, "b": 512, "kB": 1000, "k": 1024, "K": 1024, "MB": 1000 ** 2, "M": 1024 ** 2,
                "GB": 1000 ** 3, "G": 1024 ** 3}


def _dd_number(text: str) -> int | None:
    m = re.fullmatch(r"(\d+)(c|w|b|kB|k|K|MB|M|GB|G)?", text)
    return int(m[1]) * _DD_SUFFIXES.get(m[2] or "c", 1) if m else None


def _human(n: float) -> str:
    """busybox make_human_readable_str with one decimal: 41943040 -> 40.0M."""
    for unit in ("", "K", "M", "G", "T"):
        if n < 1024 or unit == "T":
            return f"{n:.1f}{unit}" if unit else f"{int(n)}"
        n /= 1024
    return str(n)


async def _dd(p: _Proc) -> int:
    """busybox dd if= of= bs= ibs= obs= count= skip= seek= status=: copies blocks, then reports
    records and bytes on stderr. /dev/zero gives zeros, /dev/random and /dev/urandom random
    bytes (as many as asked for: count bounds them)."""
    opts: dict[str, str] = {}
    for arg in p.argv[1:]:
        key, eq, value = arg.partition("=")
        if not eq or key not in ("if", "of", "bs", "ibs", "obs", "count", "skip", "seek", "status", "conv",
                                 "iflag", "oflag"):
            return await p.fail(f"invalid argument '{arg}'")  # busybox: unknown operand
        opts[key] = value
    sizes = {k: _dd_number(opts[k]) for k in ("bs", "ibs", "count", "skip") if k in opts}
    for k, v in sizes.items():
        if v is None:
            return await p.fail(f"invalid number '{opts[k]}'")
    bs = sizes.get("bs") or sizes.get("ibs") or 512
    count = sizes.get("count")
    skip = (sizes.get("skip") or 0) * bs
    source = opts.get("if", "-")
    started = time.perf_counter()
    if source in ("/dev/zero", "/dev/random", "/dev/urandom"):
        if count is None:
            return await p.fail(f"{source}: unbounded read (give count=)")  # a real one runs until killed
        want = bs * count
        if want > FILE_LIMIT:
            raise _NoSpace()
        data = bytes(want) if source == "/dev/zero" else os.urandom(want)
    else:
        if source == "-":
            data = await p.io.stdin.read_all()
        elif p.fs.is_file(p.path(source)):
            data = p.fs.read(p.path(source))
        else:
            return await p.fail(f"can't open '{source}': No such file or directory")
        data = data[skip:]
        if count is not None:
            data = data[: bs * count]
    full, part = divmod(len(data), bs)
    records = f"{full}+{1 if part else 0}"
    target = opts.get("of")
    if target is None:
        await p.out(data)
    else:
        path = p.path(target)
        if p.fs.read_only(path):
            return await p.fail(f"can't open '{target}': Read-only file system")
        if not p.fs.is_dir(posixpath.dirname(path)):
            return await p.fail(f"can't open '{target}': No such file or directory")
        if len(data) > FILE_LIMIT:
            raise _NoSpace()
        p.fs.files[path] = data
    if opts.get("status") != "none":
        seconds = max(time.perf_counter() - started, 1e-6)
        report = f"{records} records in\n{records} records out\n"
        if opts.get("status") != "noxfer":
            report += (f"{len(data)} bytes ({_human(len(data))}B) copied, {seconds:f} seconds, "
                       f"{_human(len(data) / seconds)}B/s\n")
        await p.io.err(report)
    return 0


async def _uptime(p: _Proc) -> int:
    """busybox uptime: ` HH:MM:SS up [D days, ]{H:MM|M min},  N users,  load average: ...`."""
    ctx = p.sh.ctx
    now = ctx.now()
    up = max(0, int(now - ctx.started))
    if "-s" in p.argv[1:]:
        await p.out(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(now - up)) + "\n")
        return 0
    tm = time.gmtime(now)
    text = f" {tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d} up "
    days, minutes = up // 86400, up // 60
    hours, minutes = (minutes // 60) % 24, minutes % 60
    if days:
        text += f"{days} day{'s' if days != 1 else ''}, "
    text += f"{hours:2d}:{minutes:02d}" if hours else f"{minutes} min"
    await p.out(text + ",  0 users,  load average: 0.00, 0.00, 0.00\n")
    return 0


async def _hostname(p: _Proc) -> int:
    name = p.sh.ctx.hostname
    if "-s" in p.argv[1:]:
        name = name.split(".")[0]
    elif len(p.argv) > 1 and not p.argv[1].startswith("-"):
        return await p.fail("sethostname: Operation not permitted")
    await p.out(name + "\n")
    return 0


def _seq_number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


async def _seq(p: _Proc) -> int:
    """seq [-w] [-s SEP] [FIRST [INC]] LAST."""
    flags: set[str] = set()
    values: dict[str, str] = {}
    operands: list[str] = []
    args = p.argv[1:]
    while args:
        a = args.pop(0)
        if a == "-s" and args:
            values["s"] = args.pop(0)
        elif a.startswith("-s") and len(a) > 2:
            values["s"] = a[2:]
        elif a == "-w":
            flags.add("w")
        else:
            operands.append(a)
    if not 1 <= len(operands) <= 3:
        return await p.fail("usage: seq [-w] [-s SEP] [FIRST [INC]] LAST")
    nums = [_seq_number(a) for a in operands]
    for a, n in zip(operands, nums, strict=True):
        if n is None:
            return await p.fail(f"invalid number '{a}'")
    first, inc, last = (1.0, 1.0, nums[0]) if len(nums) == 1 else (
        (nums[0], 1.0, nums[1]) if len(nums) == 2 else (nums[0], nums[1], nums[2]))
    assert first is not None and inc is not None and last is not None
    decimals = max((len(a.split(".")[1]) for a in operands if "." in a), default=0)
    width = max(len(f"{first:.{decimals}f}"), len(f"{last:.{decimals}f}")) if "w" in flags else 0
    out: list[str] = []
    x, k = first, 0
    while inc and ((inc > 0 and x <= last + 1e-9) or (inc < 0 and x >= last - 1e-9)):
        out.append(f"{x:.{decimals}f}".zfill(width))
        k += 1
        x = first + k * inc
        if k % 1000 == 0:
            await p.out(values.get("s", "\n").join(out) + values.get("s", "\n"))
            out = []
    if out:
        await p.out(values.get("s", "\n").join(out) + "\n")
    return 0


def _passwd(p: _Proc) -> list[list[str]]:
    text = _s(p.fs.read("/etc/passwd"))
    return [line.split(":") for line in text.splitlines() if line.count(":") >= 3]


def _user_name(p: _Proc, uid: int) -> str | None:
    for entry in _passwd(p):
        if entry[2] == str(uid):
            return entry[0]
    return "root" if uid == 0 else None


def _group_name(p: _Proc, gid: int) -> str | None:
    for line in _s(p.fs.read("/etc/group")).splitlines():
        entry = line.split(":")
        if len(entry) >= 3 and entry[2] == str(gid):
            return entry[0]
    return "root" if gid == 0 else None


async def _whoami(p: _Proc) -> int:
    name = _user_name(p, p.sh.ctx.uid)
    if name is None:
        return await p.fail(f"unknown uid {p.sh.ctx.uid}")
    await p.out(name + "\n")
    return 0


async def _ps(p: _Proc) -> int:
    """busybox ps (`ps aux`/`ps -ef` print the same here): PID 1 the container's command, then
    the shell this ps runs in, if any, then the ps."""
    user = _user_name(p, p.sh.ctx.uid) or str(p.sh.ctx.uid)
    rows = [(1, " ".join(p.sh.ctx.command) or "sh")]
    if posixpath.basename(p.sh.arg0) in SHELL_NAMES:
        rows.append((p.sh.pid, p.sh.arg0))
    rows.append((next(_pids), " ".join(p.argv)))
    lines = ["PID   USER     TIME  COMMAND"]
    lines += [f"{n:5d} {user[:8]:<8} {'0:00':>5} {cmd}" for n, cmd in rows]
    await p.out("\n".join(lines) + "\n")
    return 0


def _id_part(label: str, num: int, name: str | None) -> str:
    return f"{label}={num}" + (f"({name})" if name else "")


async def _id(p: _Proc) -> int:
    """id [-u|-g|-n]: `uid=0(root) gid=0(root) groups=0(root)[,...]`."""
    uid = p.sh.ctx.uid
    user = _user_name(p, uid)
    gid = next((int(e[3]) for e in _passwd(p) if e[2] == str(uid) and e[3].isdigit()), 0)
    flags = set("".join(a[1:] for a in p.argv[1:] if a.startswith("-")))
    if "u" in flags or "g" in flags:
        num, name = (uid, user) if "u" in flags else (gid, _group_name(p, gid))
        await p.out((name or str(num) if "n" in flags else str(num)) + "\n")
        return 0
    groups = [gid]
    for line in _s(p.fs.read("/etc/group")).splitlines():
        entry = line.split(":")
        if len(entry) >= 4 and user and user in entry[3].split(",") and entry[2].isdigit():
            if int(entry[2]) not in groups:
                groups.append(int(entry[2]))
    text = " ".join([_id_part("uid", uid, user), _id_part("gid", gid, _group_name(p, gid))])
    text += " groups=" + ",".join(_id_part("", g, _group_name(p, g))[1:] for g in groups)
    await p.out(text + "\n")
    return 0


async def _uname(p: _Proc) -> int:
    """uname [-snrvmoa]: the node's kernel."""
    flags = set("".join(a[1:] for a in p.argv[1:] if a.startswith("-"))) or {"s"}
    if "a" in flags:
        flags = set("snrvmo")
    fields = [("s", "Linux"), ("n", p.sh.ctx.hostname), ("r", KERNEL_RELEASE), ("v", KERNEL_VERSION),
              ("m", MACHINE), ("p", "unknown"), ("i", "unknown"), ("o", "GNU/Linux")]
    await p.out(" ".join(v for k, v in fields if k in flags) + "\n")
    return 0


def _count_arg(p: _Proc, default: int = 10) -> tuple[int, bool, list[str]]:
    """head/tail's -n N (also -N and +N): the count, whether it counts from the start, operands."""
    args = p.argv[1:]
    count, from_start, operands = default, False, []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a in ("-n", "-c") and i < len(args):
            a = "-n" + args[i]
            i += 1
        if a.startswith("-n"):
            value = a[2:]
            from_start = value.startswith("+")
            count = int(value.lstrip("+-") or "0") if value.lstrip("+-").isdigit() else default
        elif re.fullmatch(r"-\d+", a):
            count = int(a[1:])
        elif a.startswith("-") and a != "-":
            continue
        else:
            operands.append(a)
    return count, from_start, operands


async def _head(p: _Proc) -> int:
    count, _, operands = _count_arg(p)
    if not operands:
        emitted = 0
        while emitted < count and (line := await p.io.stdin.read_line()):
            await p.out(line)
            emitted += 1
        return 0
    inputs, status = await _read_inputs(p, operands)
    for k, (name, data) in enumerate(inputs):
        if len(inputs) > 1:
            await p.out(("\n" if k else "") + f"==> {name} <==\n")
        await p.out(b"".join(data.splitlines(keepends=True)[:count]))
    return status


async def _tail(p: _Proc) -> int:
    count, from_start, operands = _count_arg(p)
    inputs, status = await _read_inputs(p, operands)
    for k, (name, data) in enumerate(inputs):
        if len(inputs) > 1:
            await p.out(("\n" if k else "") + f"==> {name} <==\n")
        lines = data.splitlines(keepends=True)
        picked = lines[max(count - 1, 0):] if from_start else (lines[-count:] if count else [])
        await p.out(b"".join(picked))
    return status


async def _wc(p: _Proc) -> int:
    """wc [-lwcm] [FILE...]: one count alone is printed bare, several in %9u columns (busybox)."""
    flags, _, operands = _split_opts(p.argv[1:])
    flags = {"c" if f == "m" else f for f in flags} & set("lwcL") or {"l", "w", "c"}
    status = 0
    totals = [0, 0, 0, 0]
    rows: list[tuple[list[int], str | None]] = []
    for name in operands or ["-"]:
        if name == "-":
            data = await p.io.stdin.read_all()
        elif p.fs.is_file(p.path(name)):
            data = p.fs.read(p.path(name))
        else:
            status = await p.fail(f"{name}: No such file or directory")
            continue
        counts = [data.count(b"\n"), len(data.split()), len(data), max((len(x) for x in data.split(b"\n")), default=0)]
        totals = [a + b if k < 3 else max(a, b) for k, (a, b) in enumerate(zip(totals, counts, strict=True))]
        rows.append((counts, None if name == "-" and not operands else name))
    if len(rows) > 1:
        rows.append((totals, "total"))
    order = [k for k, f in enumerate("lwcL") if f in flags]
    for counts, label in rows:
        cells = [counts[k] for k in order]
        text = f"{cells[0]}" if len(order) == 1 else f"{cells[0]:9d}" + "".join(f" {c:9d}" for c in cells[1:])
        await p.out(text + (f" {label}\n" if label is not None else "\n"))
    return status


def _bre_to_python(pattern: str) -> str:
    """A POSIX basic regular expression as a Python one: `\\( \\) \\{ \\} \\| \\+ \\?` are the
    operators, bare `( ) { } | + ?` literal."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in "(){}|+?" else "\\" + nxt)
            i += 2
            continue
        out.append("\\" + c if c in "(){}|+?" else c)
        i += 1
    return "".join(out)


async def _grep(p: _Proc) -> int:
    """grep [-viqcnlhHFEwxs] [-e PATTERN] PATTERN [FILE...]: 0 on a match, 1 none, 2 error."""
    flags, values, operands = _split_opts(p.argv[1:], with_value="em")
    if p.name == "egrep":
        flags.add("E")
    if "e" not in values:
        if not operands:
            return await p.fail("usage: grep [-HhnlLoqvsrRiwFE] PATTERN [FILE]...", 2)
        values["e"] = operands.pop(0)
    patterns = values["e"].split("\n")
    if "F" in flags:
        rx_text = "|".join(re.escape(x) for x in patterns)
    elif "E" in flags:
        rx_text = "|".join(f"(?:{x})" for x in patterns)
    else:
        rx_text = "|".join(f"(?:{_bre_to_python(x)})" for x in patterns)
    if "w" in flags:
        rx_text = rf"(?<!\w)(?:{rx_text})(?!\w)"
    if "x" in flags:
        rx_text = rf"^(?:{rx_text})$"
    try:
        rx = re.compile(_b(rx_text), re.IGNORECASE if "i" in flags else 0)
    except re.error:
        return await p.fail("bad regex", 2)
    inputs, status = await _read_inputs(p, operands, "{}")
    status = 2 if status else 0
    found = False
    show_name = ("H" in flags or len(operands) > 1) and "h" not in flags
    for name, data in inputs:
        label = "(standard input)" if name == "-" else name
        count = 0
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for n, line in enumerate(lines, start=1):
            if bool(rx.search(line)) == ("v" in flags):
                continue
            count += 1
            found = True
            if "q" in flags:
                return 0
            if "c" in flags or "l" in flags:
                continue
            prefix = (f"{label}:" if show_name else "") + (f"{n}:" if "n" in flags else "")
            await p.out(_b(prefix) + line + b"\n")
        if "c" in flags:
            await p.out((f"{label}:" if show_name else "") + f"{count}\n")
        elif "l" in flags and count:
            await p.out(label + "\n")
    if status:
        return 2 if not found or "s" not in flags else status
    return 0 if found else 1


async def _gzip(p: _Proc) -> int:
    """gzip/gunzip/zcat [-cdfk] [FILE...]: with no file, stdin to stdout."""
    flags, _, operands = _split_opts(p.argv[1:])
    decompress = "d" in flags or p.name in ("gunzip", "zcat")
    to_stdout = "c" in flags or p.name == "zcat" or not operands
    status = 0
    for name in operands or ["-"]:
        if name == "-":
            data = await p.io.stdin.read_all()
        elif p.fs.is_file(p.path(name)):
            data = p.fs.read(p.path(name))
        else:
            status = await p.fail(f"can't open '{name}': No such file or directory")
            continue
        try:
            result = _gunzip(data) if decompress else gzip.compress(data, mtime=0)
        except (OSError, EOFError, zlib.error):
            status = await p.fail("invalid magic")
            continue
        if to_stdout or name == "-":
            await p.out(result)
            continue
        path = p.path(name)
        target = (path[:-3] if path.endswith(".gz") else path + ".out") if decompress else path + ".gz"
        if p.fs.read_only(target):
            status = await p.fail(f"can't open '{posixpath.basename(target)}': Read-only file system")
            continue
        p.fs.files[target] = result
        if "k" not in flags:
            del p.fs.files[path]
    return status


def _gunzip(data: bytes) -> bytes:
    if not data.startswith(b"\x1f\x8b"):
        raise OSError("invalid magic")
    return gzip.decompress(data)


async def _base64(p: _Proc) -> int:
    """base64 [-d] [-w COLS] [FILE]: lines of 76 characters."""
    flags, values, operands = _split_opts(p.argv[1:], with_value="w")
    inputs, status = await _read_inputs(p, operands[:1])
    if status:
        return status
    data = inputs[0][1]
    if "d" in flags:
        try:
            await p.out(base64.b64decode(b"".join(data.split()), validate=False))
        except (binascii.Error, ValueError):
            return await p.fail("invalid input")
        return 0
    text = base64.b64encode(data).decode()
    width = int(values.get("w", "76")) if values.get("w", "76").isdigit() else 76
    lines = [text[k:k + width] for k in range(0, len(text), width)] if width else [text]
    await p.out("".join(line + "\n" for line in lines if line) if text else "")
    return 0


async def _mkdir(p: _Proc) -> int:
    flags, _, operands = _split_opts(p.argv[1:], with_value="m")
    status = 0
    for name in operands:
        path = p.path(name)
        if p.fs.exists(path):
            if "p" not in flags or not p.fs.is_dir(path):
                status = await p.fail(f"can't create directory '{name}': File exists")
            continue
        if "p" not in flags and not p.fs.is_dir(posixpath.dirname(path)):
            status = await p.fail(f"can't create directory '{name}': No such file or directory")
            continue
        if p.fs.read_only(path):
            status = await p.fail(f"can't create directory '{name}': Read-only file system")
            continue
        p.fs.mkdir(path)
    return status


async def _touch(p: _Proc) -> int:
    _, _, operands = _split_opts(p.argv[1:], with_value="dtr")
    status = 0
    for name in operands:
        path = p.path(name)
        if p.fs.exists(path):
            continue
        if not p.fs.is_dir(posixpath.dirname(path)):
            status = await p.fail(f"{name}: No such file or directory")
            continue
        if p.fs.read_only(path):
            status = await p.fail(f"{name}: Read-only file system")
            continue
        p.fs.files[path] = b""
    return status


async def _rm(p: _Proc) -> int:
    flags, _, operands = _split_opts(p.argv[1:])
    status = 0
    for name in operands:
        path = p.path(name)
        if not p.fs.exists(path):
            if "f" not in flags:
                status = await p.fail(f"can't remove '{name}': No such file or directory")
            continue
        if p.fs.is_dir(path) and not ({"r", "R"} & flags):
            status = await p.fail(f"'{name}' is a directory")
            continue
        if p.fs.read_only(path):
            status = await p.fail(f"can't remove '{name}': Read-only file system")
            continue
        p.fs.remove(path)
    return status


async def _tee(p: _Proc) -> int:
    flags, _, operands = _split_opts(p.argv[1:])
    sinks: list[_Sink] = []
    status = 0
    for name in operands:
        try:
            sinks.append(p.sh.open_write(name, "a" in flags, p.io.fds))
        except _RedirError as e:
            why = "Read-only file system" if "Read-only" in str(e) else "No such file or directory"
            status = await p.fail(f"can't open '{name}': {why}")
    while chunk := await p.io.stdin.read():
        await p.out(chunk)
        for sink in sinks:
            await sink.write(chunk)
    return status


async def _env(p: _Proc) -> int:
    """env [-i] [-u NAME] [NAME=VALUE...] [PROG ARGS...]."""
    args = p.argv[1:]
    env = dict(p.env)
    while args and args[0].startswith("-") and args[0] != "-":
        flag = args.pop(0)
        if flag in ("-i", "--ignore-environment"):
            env = {}
        elif flag == "-u" and args:
            env.pop(args.pop(0), None)
    while args and "=" in args[0]:
        name, _, value = args.pop(0).partition("=")
        env[name] = value
    if not args:
        await p.out("".join(f"{k}={v}\n" for k, v in env.items()))
        return 0
    program = p.sh.find_program(args[0], env.get("PATH"))
    if program is None:
        return await p.fail(f"can't execute '{args[0]}': No such file or directory", 127)
    return await program(_Proc(p.sh, args, p.io, env))


async def _printenv(p: _Proc) -> int:
    names = p.argv[1:]
    if not names:
        await p.out("".join(f"{k}={v}\n" for k, v in p.env.items()))
        return 0
    status = 0
    for name in names:
        if name in p.env:
            await p.out(p.env[name] + "\n")
        else:
            status = 1
    return status


_SLEEP_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


async def _sleep(p: _Proc) -> int:
    """sleep N[smhd]...: the durations added."""
    if len(p.argv) < 2:
        return await p.fail("usage: sleep [N]...")
    total = 0.0
    for arg in p.argv[1:]:
        if arg in ("inf", "infinity"):
            total = float("inf")
            continue
        m = re.fullmatch(r"(\d+(?:\.\d*)?|\.\d+)([smhd]?)", arg)
        if m is None:
            return await p.fail(f"invalid number '{arg}'")
        total += float(m.group(1)) * _SLEEP_UNITS[m.group(2)]
    while total == float("inf"):
        await p.sh.ctx.sleep(86400.0)
    await p.sh.ctx.sleep(total)
    return 0


async def _nproc(p: _Proc) -> int:
    await p.out(f"{os.cpu_count() or 1}\n")
    return 0


async def _xargs(p: _Proc) -> int:
    """xargs [CMD [ARGS...]]: the words of stdin appended to the command (default echo), once."""
    flags, values, operands = _split_opts(p.argv[1:], with_value="nI")
    data = _s(await p.io.stdin.read_all())
    words = data.split()
    argv = (operands or ["echo"]) + words
    if not words and "r" in flags:
        return 0
    return await p.sh.invoke(argv, [], p.io)


async def _basename(p: _Proc) -> int:
    if len(p.argv) < 2:
        return await p.fail("usage: basename FILE [SUFFIX]")
    name = p.argv[1].rstrip("/") or "/"
    base = posixpath.basename(name) or "/"
    if len(p.argv) > 2 and base != p.argv[2] and base.endswith(p.argv[2]):
        base = base[: -len(p.argv[2])]
    await p.out(base + "\n")
    return 0


async def _dirname(p: _Proc) -> int:
    if len(p.argv) < 2:
        return await p.fail("usage: dirname FILENAME")
    name = p.argv[1].rstrip("/") or "/"
    await p.out((posixpath.dirname(name).rstrip("/") or ("/" if name.startswith("/") else ".")) + "\n")
    return 0


async def _yes(p: _Proc) -> int:
    line = _b((" ".join(p.argv[1:]) or "y") + "\n")
    while True:
        await p.out(line)
        await asyncio.sleep(0)


async def _sort(p: _Proc) -> int:
    flags, _, operands = _split_opts(p.argv[1:])
    inputs, status = await _read_inputs(p, operands)
    lines = [line for _, data in inputs for line in _s(data).splitlines()]
    if "n" in flags:
        def key(s: str) -> tuple[float, str]:
            m = re.match(r"\s*-?\d+(\.\d+)?", s)
            return (float(m.group(0)) if m else 0.0, s)
        lines.sort(key=key, reverse="r" in flags)
    else:
        lines.sort(reverse="r" in flags)
    if "u" in flags:
        lines = list(dict.fromkeys(lines))
    await p.out("".join(line + "\n" for line in lines))
    return status


async def _which_applet(p: _Proc) -> int:
    status = 0
    for name in p.argv[1:]:
        path = _which(p, name)
        if path is None:
            status = 1
        else:
            await p.out(path + "\n")
    return status


def _tar_info(p: _Proc, name: str, size: int, is_dir: bool) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if is_dir else tarfile.REGTYPE
    info.mode = 0o755 if is_dir else 0o644
    info.size = 0 if is_dir else size
    info.mtime = int(p.sh.ctx.started)
    info.uname = info.gname = "root"
    return info


def _tar_add(p: _Proc, tf: tarfile.TarFile, path: str, arcname: str) -> None:
    if p.fs.is_dir(path):
        tf.addfile(_tar_info(p, arcname.rstrip("/") + "/", 0, True))
        for child in p.fs.children(path):
            _tar_add(p, tf, _norm(path, child), arcname.rstrip("/") + "/" + child)
        return
    data = p.fs.read(path)
    tf.addfile(_tar_info(p, arcname, len(data), False), BytesIO(data))


async def _tar_create(p: _Proc, flags: set[str], base: str, operands: list[str]) -> tuple[bytes, int]:
    if not operands:
        return b"", await p.fail("empty archive")
    status = 0
    buf = BytesIO()
    warned = False
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tf:
        for name in operands:
            path = _norm(base, name)
            if not p.fs.exists(path):
                status = await p.fail(f"{name}: No such file or directory")
                continue
            arcname = name.lstrip("/")
            if arcname != name and not warned:
                warned = True
                await p.io.err("tar: removing leading '/' from member names\n")
            _tar_add(p, tf, path, arcname or ".")
    data = buf.getvalue()
    return (gzip.compress(data, mtime=0) if "z" in flags else data), status


async def _tar_extract(p: _Proc, flags: set[str], base: str, data: bytes, operands: list[str]) -> int:
    try:
        if "z" in flags or data.startswith(b"\x1f\x8b"):
            data = _gunzip(data)
        tf = tarfile.open(fileobj=BytesIO(data), mode="r:")
    except (OSError, EOFError, tarfile.TarError, zlib.error):
        return await p.fail("short read")
    with tf:
        for member in tf.getmembers():
            name = member.name.lstrip("/")
            if ".." in name.split("/") or (operands and not any(
                    name == op.strip("/") or name.startswith(op.strip("/") + "/") for op in operands)):
                continue
            target = _norm(base, name)
            if "t" in flags or "v" in flags:
                await p.out(member.name + ("/" if member.isdir() else "") + "\n")
            if "t" in flags:
                continue
            if p.fs.read_only(target):
                await p.io.err(f"tar: can't open '{name}': Read-only file system\n")
                return 1
            if member.isdir():
                p.fs.mkdir(target)
            elif member.isfile():
                extracted = tf.extractfile(member)
                if not p.fs.is_dir(posixpath.dirname(target)):
                    p.fs.mkdir(posixpath.dirname(target))
                p.fs.files[target] = extracted.read() if extracted is not None else b""
    return 0


async def _tar(p: _Proc) -> int:
    """busybox tar -c|-x|-t [-zvm] [-f FILE] [-C DIR] [PATH...] (what `kubectl cp` runs)."""
    args = list(p.argv[1:])
    if args and not args[0].startswith("-"):
        args[0] = "-" + args[0]
    flags, values, operands = _split_opts(args, with_value="fCX")
    archive = values.get("f", "-")
    base = p.path(values.get("C", "."))
    if not p.fs.is_dir(base):
        return await p.fail(f"can't change directory to '{values.get('C')}': No such file or directory")
    if "c" in flags:
        data, status = await _tar_create(p, flags, base, operands)
        if archive == "-":
            await p.out(data)
        elif p.fs.read_only(p.path(archive)):
            return await p.fail(f"can't open '{archive}': Read-only file system")
        else:
            p.fs.files[p.path(archive)] = data
        return status
    if not flags & {"x", "t"}:
        return await p.fail("need at least one of -c, -x or -t")
    if archive == "-":
        data = await p.io.stdin.read_all()
    elif p.fs.is_file(p.path(archive)):
        data = p.fs.read(p.path(archive))
    else:
        return await p.fail(f"can't open '{archive}': No such file or directory")
    return await _tar_extract(p, flags, base, data, operands)


SPECIAL_BUILTINS: dict[str, Program] = {
    ":": _colon, "exit": _exit, "return": _return, "break": _loop_control, "continue": _loop_control,
    "export": _export, "readonly": _readonly, "unset": _unset, "set": _set, "shift": _shift,
    "eval": _eval, ".": _dot, "source": _dot, "exec": _exec,
}
BUILTINS: dict[str, Program] = {
    "echo": _echo, "printf": _printf, "test": _test, "[": _test, "true": _colon, "false": _false,
    "cd": _cd, "pwd": _pwd, "read": _read, "local": _local, "wait": _wait, "command": _command,
    "kill": _kill,
}
APPLETS: dict[str, Program] = {
    "sh": _sh, "ash": _sh, "bash": _sh, "echo": _echo, "printf": _printf, "test": _test, "[": _test,
    "true": _colon, "false": _false, "pwd": _pwd, "kill": _kill, "cat": _cat, "ls": _ls,
    "date": _date, "uptime": _uptime, "ps": _ps, "hostname": _hostname, "seq": _seq, "whoami": _whoami,
    "id": _id, "uname": _uname, "head": _head, "dd": _dd, "tail": _tail, "wc": _wc, "grep": _grep,
    "egrep": _grep, "gzip": _gzip, "gunzip": _gzip, "zcat": _gzip, "base64": _base64,
    "mkdir": _mkdir, "touch": _touch, "rm": _rm, "tee": _tee, "env": _env, "printenv": _printenv,
    "sleep": _sleep, "nproc": _nproc, "xargs": _xargs, "basename": _basename,
    "dirname": _dirname, "yes": _yes, "sort": _sort, "which": _which_applet, "tar": _tar,
}


# ---------------------------------------------------------------------------------------------
# the runtime's exec


def _not_found_message(name: str) -> str:
    """Go's exec.LookPath error as runc reports it (exec.Error: `exec: "NAME": ERR`)."""
    if "/" in name:
        return f'exec: "{name}": stat {name}: no such file or directory'
    return f'exec: "{name}": executable file not found in $PATH'


async def run_exec(argv: Sequence[str], ctx: ExecContext, stdin: Stdin | None,
                   stdout: Writer, stderr: Writer) -> int:
    """Run argv as the container runtime would (direct exec of a program, no shell unless
    argv[0] is a shell); return the exit code. Raises ExecNotFound when argv[0] is not a
    program of the image (runc's `exec: "NAME": executable file not found in $PATH`)."""
    fs = _Fs(ctx)
    env = dict(ctx.env)
    init = _Shell(ctx, fs, env, _norm("/", ctx.workdir or "/"), argv[0] if argv else "", [])
    name = argv[0] if argv else ""
    program = init.find_program(name, env.get("PATH")) if name else None
    if program is None:
        raise ExecNotFound(_not_found_message(name))
    reader: _Reader = _StdinReader(stdin) if stdin is not None else _BytesReader(b"")
    io = _IO({0: reader, 1: _CallbackSink(stdout), 2: _CallbackSink(stderr)})
    try:
        return await program(_Proc(init, list(argv), io, env))
    except _ShellExit as e:
        return e.status
    except _BrokenPipe:
        return SIGPIPE_STATUS
    except RecursionError:  # endless recursion (`f() { f; }; f`): the process dies of its stack
        return SEGV_STATUS
    except (_Incomplete, _SyntaxError, _ShellError) as e:  # met while expanding, not parsing
        await stderr(f"{posixpath.basename(argv[0]) if argv else 'sh'}: {e.message}\n".encode())
        return 2
    except (_LoopControl, _Return):
        return 0
