"""The simulated shell behind `pods/exec` (minik3s.api.helpers.shell): what a client of a
busybox container sees on stdout/stderr and as the exit code, on a fake clock."""

from __future__ import annotations

import asyncio
import gzip
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from minik3s.api.helpers.shell import ExecContext, ExecNotFound, run_exec

NOW = 1796321152.0  # Thu Dec  3 18:05:52 UTC 2026
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
BASE_ENV = {"PATH": PATH, "HOSTNAME": "web-0", "HOME": "/root"}
PASSWD = b"root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/home:/bin/false\n"
GROUP = b"root:x:0:\nwheel:x:10:root\nnobody:x:65534:\n"


@dataclass
class FakeClock:
    now: float = NOW
    sleeps: list[float] = field(default_factory=list)

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)


class ChunkStdin:
    """Stdin that hands out the given chunks, then EOF."""

    def __init__(self, chunks: Sequence[bytes]) -> None:
        self.chunks = list(chunks)

    async def read(self) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


class QueueStdin:
    """Stdin the test drives: None in the queue is EOF."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def read(self) -> bytes:
        data = await self.queue.get()
        return b"" if data is None else data


def make_ctx(clock: FakeClock, files: dict[str, bytes] | None = None, env: dict[str, str] | None = None,
             uid: int = 0) -> ExecContext:
    return ExecContext(
        env={**BASE_ENV, **(env or {})}, files={} if files is None else files, hostname="web-0",
        now=lambda: clock.now, started=NOW - 200, sleep=clock.sleep, uid=uid,
    )


@dataclass
class Result:
    out: bytes
    err: bytes
    code: int


async def run(argv: Sequence[str], ctx: ExecContext, stdin_chunks: Sequence[bytes] | None = None) -> Result:
    out, err = bytearray(), bytearray()

    async def on_out(data: bytes) -> None:
        out.extend(data)

    async def on_err(data: bytes) -> None:
        err.extend(data)

    stdin = ChunkStdin(stdin_chunks) if stdin_chunks is not None else None
    code = await run_exec(argv, ctx, stdin, on_out, on_err)
    return Result(bytes(out), bytes(err), code)


def sh(script: str) -> list[str]:
    return ["/bin/sh", "-c", script]


DATE_LINE = b"Thu Dec  3 18:05:52 UTC 2026\n"

# (argv, stdin chunks or None, files, env, uid) -> (stdout, stderr, exit code)
CASES: list[tuple[str, list[str], list[bytes] | None, dict[str, bytes], dict[str, str], int, bytes, bytes, int]] = [
    ("seq date loop", sh("for i in $(seq 1 3); do date; done"), None, {}, {}, 0, DATE_LINE * 3, b"", 0),
    ("true", ["true"], None, {}, {}, 0, b"", b"", 0),
    ("false", ["false"], None, {}, {}, 0, b"", b"", 1),
    ("/bin/false by path", ["/bin/false"], None, {}, {}, 0, b"", b"", 1),
    ("sleep then exit 3", sh("sleep 1; exit 3"), None, {}, {}, 0, b"", b"", 3),
    ("exit with last status", sh("false; exit"), None, {}, {}, 0, b"", b"", 1),
    ("exit illegal number", sh("exit abc"), None, {}, {}, 0, b"", b"/bin/sh: exit: Illegal number: abc\n", 2),
    ("ls root", sh("ls /"), None, {}, {}, 0, b"bin\ndev\netc\nhome\nlib\nproc\nroot\nsys\ntmp\nusr\nvar\n", b"", 0),
    ("ls root with implied dirs", ["ls", "/"], None, {"/data/x/y.txt": b"1"}, {}, 0,
     b"bin\ndata\ndev\netc\nhome\nlib\nproc\nroot\nsys\ntmp\nusr\nvar\n", b"", 0),
    ("ls dir sorted, hidden skipped", ["ls", "/cfg"], None, {"/cfg/b": b"", "/cfg/a": b"", "/cfg/.h": b""}, {}, 0,
     b"a\nb\n", b"", 0),
    ("ls -a", ["ls", "-a", "/cfg"], None, {"/cfg/b": b"", "/cfg/.h": b""}, {}, 0, b".\n..\n.h\nb\n", b"", 0),
    ("ls missing", ["ls", "/nope"], None, {}, {}, 0, b"", b"ls: /nope: No such file or directory\n", 1),
    ("not found in script", ["sh", "-c", "nosuch"], None, {}, {}, 0, b"", b"sh: nosuch: not found\n", 127),
    ("not found with $0 name", ["sh", "-c", "echo a\nnosuch x", "myname"], None, {}, {}, 0, b"a\n",
     b"myname: line 2: nosuch: not found\n", 127),
    ("not found then continue", sh("nosuch; echo $?"), None, {}, {}, 0, b"127\n",
     b"/bin/sh: nosuch: not found\n", 0),
    ("uptime", ["uptime"], None, {}, {}, 0,
     b" 18:05:52 up 3 min,  0 users,  load average: 0.00, 0.00, 0.00\n", b"", 0),
    ("date format", ["date", "+%Y-%m-%dT%H:%M:%S %Z %s"], None, {}, {}, 0,
     b"2026-12-03T18:05:52 UTC 1796321152\n", b"", 0),
    ("date -u", ["date", "-u"], None, {}, {}, 0, DATE_LINE, b"", 0),
    ("hostname", ["hostname"], None, {}, {}, 0, b"web-0\n", b"", 0),
    ("uname -a", ["uname", "-a"], None, {}, {}, 0,
     b"Linux web-0 6.8.0-49-generic #49-Ubuntu SMP PREEMPT_DYNAMIC Mon Nov  4 02:06:24 UTC 2024 x86_64 GNU/Linux\n",
     b"", 0),
    ("uname -srm", ["uname", "-s", "-r", "-m"], None, {}, {}, 0, b"Linux 6.8.0-49-generic x86_64\n", b"", 0),
    ("whoami root", ["whoami"], None, {}, {}, 0, b"root\n", b"", 0),
    ("whoami unknown uid", ["whoami"], None, {}, {}, 1000, b"", b"whoami: unknown uid 1000\n", 1),
    ("id root with groups", ["id"], None, {"/etc/passwd": PASSWD, "/etc/group": GROUP}, {}, 0,
     b"uid=0(root) gid=0(root) groups=0(root),10(wheel)\n", b"", 0),
    ("id unknown uid", ["id"], None, {}, {}, 1000, b"uid=1000 gid=0(root) groups=0(root)\n", b"", 0),
    ("id nobody", ["id", "-u"], None, {"/etc/passwd": PASSWD}, {}, 65534, b"65534\n", b"", 0),
    ("printenv name", ["printenv", "FOO"], None, {}, {"FOO": "bar"}, 0, b"bar\n", b"", 0),
    ("printenv missing", ["printenv", "NOPE"], None, {}, {}, 0, b"", b"", 1),
    ("env lists environment", ["env"], None, {}, {"FOO": "bar"}, 0,
     f"PATH={PATH}\nHOSTNAME=web-0\nHOME=/root\nFOO=bar\n".encode(), b"", 0),
    ("env with assignment runs program", ["env", "A=1", "printenv", "A"], None, {}, {}, 0, b"1\n", b"", 0),
    ("assignment before command only", sh('A=1 printenv A; echo "[$A]"'), None, {}, {}, 0, b"1\n[]\n", b"", 0),
    ("export reaches programs", sh("B=2; printenv B; export B; printenv B"), None, {}, {}, 0, b"2\n", b"", 0),
    ("unset", sh('unset FOO; echo "[$FOO]"'), None, {}, {"FOO": "x"}, 0, b"[]\n", b"", 0),
    ("quoting", sh("""echo 'a  b' "c  d" e\\ f 'it'"'"'s' "$FOO" '$FOO' \\$FOO"""), None, {}, {"FOO": "v"}, 0,
     b"a  b c  d e f it's v $FOO $FOO\n", b"", 0),
    ("field splitting", sh('x="1  2"; echo $x; echo "$x"; set -- $x; echo $#'), None, {}, {}, 0,
     b"1 2\n1  2\n2\n", b"", 0),
    ("empty quoted word kept", sh('set -- "" a; echo $#; set -- $NOPE; echo $#'), None, {}, {}, 0, b"2\n0\n", b"", 0),
    ("backslash in double quotes", sh(r'echo "a\"b\$c\\d\e"'), None, {}, {}, 0, b'a"b$c\\d\\e\n', b"", 0),
    ("param forms", sh('echo ${NOPE:-def} ${FOO:+alt} ${#FOO} ${P%.txt} ${P##*/} ${E-unset}${E:-empty}'), None, {},
     {"FOO": "abc", "P": "/a/b.txt", "E": ""}, 0, b"def alt 3 /a/b b.txt empty\n", b"", 0),
    ("param assign default", sh('echo ${X:=7}; echo $X'), None, {}, {}, 0, b"7\n7\n", b"", 0),
    ("param error", sh('echo ${X:?missing}; echo no'), None, {}, {}, 0, b"", b"/bin/sh: X: missing\n", 2),
    ("positional params", ["sh", "-c", 'echo "$0|$1|$2|$#|$*"', "name", "a", "b c"], None, {}, {}, 0,
     b"name|a|b c|2|a b c\n", b"", 0),
    ("quoted $@ keeps words", ["sh", "-c", 'for a in "$@"; do echo "<$a>"; done', "n", "x y", "z"], None, {}, {}, 0,
     b"<x y>\n<z>\n", b"", 0),
    ("status param", sh("false; echo $?; true; echo $?"), None, {}, {}, 0, b"1\n0\n", b"", 0),
    ("command substitution", sh('x=$(echo hi; echo there); echo "[$x]" `echo back`'), None, {}, {}, 0,
     b"[hi\nthere] back\n", b"", 0),
    ("nested substitution", sh('echo $(echo $(echo deep))'), None, {}, {}, 0, b"deep\n", b"", 0),
    ("substitution status", sh('x=$(false); echo $?'), None, {}, {}, 0, b"1\n", b"", 0),
    ("arithmetic", sh('i=5; echo $((i * 2 + 1)) $((7 / 2)) $((7 % 3)) $((2 > 1)) $((-7 / 2))'), None, {}, {}, 0,
     b"11 3 1 1 -3\n", b"", 0),
    ("divide by zero", sh('echo $((1/0)); echo no'), None, {}, {}, 0, b"", b"/bin/sh: divide by zero\n", 2),
    ("echo -n and -e", sh(r'echo -n a; echo -e "b\tc\x41"; echo "d\n"'), None, {}, {}, 0,
     b"ab\tcA\nd\\n\n", b"", 0),
    ("printf", sh(r'printf "%s=%d\n" a 1 b 2; printf "%5.2f|%x|%-3s|%%\n" 3.14159 255 z; printf "%b" "x\ty\n"'),
     None, {}, {}, 0, b"a=1\nb=2\n 3.14|ff|z  |%\nx\ty\n", b"", 0),
    ("stdout and stderr", sh("echo out; echo err >&2; echo err2 1>&2"), None, {}, {}, 0, b"out\n", b"err\nerr2\n", 0),
    ("2>&1", sh("ls /nope 2>&1"), None, {}, {}, 0, b"ls: /nope: No such file or directory\n", b"", 1),
    ("dev null", sh("echo x >/dev/null; ls /nope 2>/dev/null; echo $?"), None, {}, {}, 0, b"1\n", b"", 0),
    ("&> both", sh("{ echo a; echo b >&2; } &>/dev/null; echo done"), None, {}, {}, 0, b"done\n", b"", 0),
    ("group 2>&1 into pipe", sh("{ echo a; echo b >&2; } 2>&1 | cat"), None, {}, {}, 0, b"a\nb\n", b"", 0),
    ("redirect input", sh("wc -l < /etc/hosts"), None, {"/etc/hosts": b"a\nb\n"}, {}, 0, b"2\n", b"", 0),
    ("redirect into missing dir", sh("echo a > /nodir/x; echo $?"), None, {}, {}, 0, b"1\n",
     b"/bin/sh: can't create /nodir/x: nonexistent directory\n", 0),
    ("redirect onto a dir", sh("echo a > /tmp"), None, {}, {}, 0, b"", b"/bin/sh: can't create /tmp: Is a directory\n", 1),
    ("redirect from missing file", sh("cat < /nope"), None, {}, {}, 0, b"", b"/bin/sh: can't open /nope: no such file\n", 1),
    ("and or", sh("false || echo a && echo b; true && false || echo c"), None, {}, {}, 0, b"a\nb\nc\n", b"", 0),
    ("negation", sh("! false && echo neg; ! true; echo $?"), None, {}, {}, 0, b"neg\n1\n", b"", 0),
    ("pipeline status is the last stage's", sh("true | false; echo $?; false | true; echo $?"), None, {}, {}, 0,
     b"1\n0\n", b"", 0),
    ("pipe closes early (SIGPIPE)", sh("yes | head -n 2"), None, {}, {}, 0, b"y\ny\n", b"", 0),
    ("if elif else", sh("if false; then echo 1; elif [ 1 -lt 2 ]; then echo 2; else echo 3; fi"), None, {}, {}, 0,
     b"2\n", b"", 0),
    ("while with counter", sh("i=0; while [ $i -lt 3 ]; do echo $i; i=$((i+1)); done"), None, {}, {}, 0,
     b"0\n1\n2\n", b"", 0),
    ("until and break", sh("until false; do echo once; break; done"), None, {}, {}, 0, b"once\n", b"", 0),
    ("continue", sh("for i in 1 2 3; do [ $i = 2 ] && continue; echo $i; done"), None, {}, {}, 0, b"1\n3\n", b"", 0),
    ("while read", sh('printf "a\\nb c\\n" | while read x y; do echo "<$x|$y>"; done'), None, {}, {}, 0,
     b"<a|>\n<b|c>\n", b"", 0),
    ("case", sh('for w in apple kiwi x; do case $w in a*) echo A;; kiwi|lime) echo K;; *) echo other;; esac; done'),
     None, {}, {}, 0, b"A\nK\nother\n", b"", 0),
    ("subshell does not leak", sh("X=1; (X=2; cd /tmp; echo $X); echo $X; pwd"), None, {}, {}, 0, b"2\n1\n/\n", b"", 0),
    ("cd and pwd", sh("cd /tmp && pwd; cd /nope"), None, {}, {}, 0, b"/tmp\n",
     b"/bin/sh: cd: can't cd to /nope: No such file or directory\n", 2),
    ("workdir relative paths", sh("cd /cfg; cat a.txt"), None, {"/cfg/a.txt": b"A\n"}, {}, 0, b"A\n", b"", 0),
    ("functions", sh('f() { echo "f:$1"; return 4; }; f z; echo $?'), None, {}, {}, 0, b"f:z\n4\n", b"", 0),
    ("set -e", ["sh", "-e", "-c", "echo a; false; echo b"], None, {}, {}, 0, b"a\n", b"", 1),
    ("set -e spares conditions", sh("set -e; if false; then :; fi; false || echo ok; ! true; echo end"), None, {}, {},
     0, b"ok\nend\n", b"", 0),
    ("syntax error unexpected end", sh("if true; then echo x"), None, {}, {}, 0, b"",
     b"/bin/sh: syntax error: unexpected end of file\n", 2),
    ("unterminated quote", sh('echo "abc'), None, {}, {}, 0, b"",
     b"/bin/sh: syntax error: unterminated quoted string\n", 2),
    ("unexpected keyword", sh("fi"), None, {}, {}, 0, b"", b'/bin/sh: syntax error: unexpected "fi"\n', 2),
    ("line continuation", sh("echo a\\\nb \\\n c"), None, {}, {}, 0, b"ab c\n", b"", 0),
    ("comments", sh("echo a # not this\n# nor this\necho b#c"), None, {}, {}, 0, b"a\nb#c\n", b"", 0),
    ("glob", sh("echo /cfg/*.txt; echo /cfg/*.none"), None, {"/cfg/b.txt": b"", "/cfg/a.txt": b"", "/cfg/c": b""}, {},
     0, b"/cfg/a.txt /cfg/b.txt\n/cfg/*.none\n", b"", 0),
    ("quoted glob is literal", sh("echo '/cfg/*'"), None, {"/cfg/a": b""}, {}, 0, b"/cfg/*\n", b"", 0),
    ("cat files", ["cat", "/a", "/b"], None, {"/a": b"1\n", "/b": b"2\n"}, {}, 0, b"1\n2\n", b"", 0),
    ("cat missing", ["cat", "/nope"], None, {}, {}, 0, b"", b"cat: can't open '/nope': No such file or directory\n", 1),
    ("cat stdin", ["cat"], [b"one\n", b"two\n"], {}, {}, 0, b"one\ntwo\n", b"", 0),
    ("cat dash", ["cat", "/a", "-"], [b"in\n"], {"/a": b"file\n"}, {}, 0, b"file\nin\n", b"", 0),
    ("head", sh("seq 1 10 | head -n 3; seq 5 | head -2"), None, {}, {}, 0, b"1\n2\n3\n1\n2\n", b"", 0),
    ("tail", sh("seq 10 | tail -n 2; seq 3 | tail -n +2"), None, {}, {}, 0, b"9\n10\n2\n3\n", b"", 0),
    ("seq forms", sh("seq 3; seq 2 4; seq 10 -5 1; seq -s , 3"), None, {}, {}, 0,
     b"1\n2\n3\n2\n3\n4\n10\n5\n1,2,3\n", b"", 0),
    ("wc single count bare", sh("echo abc | wc -c; printf 'a\\nb\\n' | wc -l"), None, {}, {}, 0, b"4\n2\n", b"", 0),
    ("wc columns", sh("printf 'a b\\nc\\n' | wc"), None, {}, {}, 0, b"        2         3         6\n", b"", 0),
    ("wc file", ["wc", "-l", "/a"], None, {"/a": b"x\ny\n"}, {}, 0, b"2 /a\n", b"", 0),
    ("grep", sh("printf 'alpha\\nBeta\\ngamma\\n' | grep -i beta; printf 'a\\nb\\n' | grep -v a;"
                " printf 'x1\\nx2\\ny\\n' | grep -c x; echo q | grep -q z; echo $?"), None, {}, {}, 0,
     b"Beta\nb\n2\n1\n", b"", 0),
    ("grep regex", sh("printf 'ab1\\nab\\nc\\n' | grep 'ab[0-9]'; printf 'a+b\\n' | grep 'a+b'; printf 'aab\\n' | grep -E 'a+b'"),
     None, {}, {}, 0, b"ab1\na+b\naab\n", b"", 0),
    ("grep file with names", ["grep", "x", "/a", "/b"], None, {"/a": b"x1\n", "/b": b"y\nx2\n"}, {}, 0,
     b"/a:x1\n/b:x2\n", b"", 0),
    ("grep missing file", ["grep", "x", "/nope"], None, {}, {}, 0, b"", b"grep: /nope: No such file or directory\n", 2),
    ("base64", sh("echo -n hi | base64; echo aGk= | base64 -d"), None, {}, {}, 0, b"aGk=\nhi", b"", 0),
    ("gzip round trip", sh("echo -n data | gzip | gunzip; echo -n x | gzip -c | zcat"), None, {}, {}, 0, b"datax", b"", 0),
    ("test operators", sh('[ a = a ] && echo eq; [ a != a ] || echo ne; test -z "" && echo z; test -n x && echo n;'
                          ' [ 3 -ge 3 ] && echo ge; [ -f /a ] && echo f; [ -d /tmp ] && echo d; [ -e /nope ] || echo e'),
     None, {"/a": b""}, {}, 0, b"eq\nne\nz\nn\nge\nf\nd\ne\n", b"", 0),
    ("[ missing ]", sh("[ a = a"), None, {}, {}, 0, b"", b"/bin/sh: [: missing ]\n", 2),
    ("test invalid number", sh("[ x -eq 1 ]"), None, {}, {}, 0, b"", b"/bin/sh: [: invalid number 'x'\n", 2),
    ("sleep invalid", ["sleep", "abc"], None, {}, {}, 0, b"", b"sleep: invalid number 'abc'\n", 1),
    ("eval", sh("cmd='echo evaluated'; eval $cmd"), None, {}, {}, 0, b"evaluated\n", b"", 0),
    ("script file", ["/bin/sh", "/run.sh", "arg"], None, {"/run.sh": b"#!/bin/sh\necho \"run $1\"\nexit 5\n"}, {}, 0,
     b"run arg\n", b"", 5),
    ("script file by path", ["/run.sh"], None, {"/run.sh": b"#!/bin/sh\necho ran\n"}, {}, 0, b"ran\n", b"", 0),
    ("missing script file", ["sh", "/nope.sh"], None, {}, {}, 0, b"",
     b"sh: can't open '/nope.sh': No such file or directory\n", 2),
    ("echo by path", ["/usr/bin/env", "printenv", "HOME"], None, {}, {}, 0, b"/root\n", b"", 0),
    ("sh reads script from stdin", ["sh"], [b"echo a\n", b"if true\n", b"then echo b\nfi\n", b"echo c"], {}, {}, 0,
     b"a\nb\nc\n", b"", 0),
    ("sh stdin EOF keeps last status", ["sh"], [b"false\n"], {}, {}, 0, b"", b"", 1),
    ("bash -c", ["bash", "-c", "echo $SHLVL $PWD"], None, {}, {}, 0, b"1 /\n", b"", 0),
    ("basename dirname", sh("basename /a/b.txt .txt; dirname /a/b.txt"), None, {}, {}, 0, b"b\n/a\n", b"", 0),
    ("xargs", sh("printf '1\\n2\\n' | xargs echo n"), None, {}, {}, 0, b"n 1 2\n", b"", 0),
    ("sort", sh("printf 'b\\na\\nc\\n' | sort; printf '10\\n9\\n' | sort -n"), None, {}, {}, 0, b"a\nb\nc\n9\n10\n", b"", 0),
    ("background and wait", sh("echo bg & wait; echo fg"), None, {}, {}, 0, b"bg\nfg\n", b"", 0),
    ("background job outlives the script", sh("(sleep 1; echo late) & echo early"), None, {}, {}, 0,
     b"early\nlate\n", b"", 0),
    ("here-document", sh('cat <<EOF\n$HOME "q" \\$x $((1+1))\nEOF\ncat <<\'E\'\n$HOME\nE\ncat <<-T\n\t\ttabs\n\tT'), None, {}, {},
     0, b'/root "q" $x 2\n$HOME\ntabs\n', b"", 0),
    ("sh -x traces to stderr", ["/bin/sh", "-x", "-c", "printenv FOO; A='x y' echo \"a b\" it\\'s k=v ''"], None, {},
     {"FOO": "v"}, 0, b"v\na b it's k=v \n",
     b"+ printenv FOO\n+ A='x y' echo 'a b' 'it'\"'\"'s' 'k=v' \n", 0),
    ("tar list", ["tar", "-tf", "/a.tar"], None, {}, {}, 0, b"", b"tar: can't open '/a.tar': No such file or directory\n", 1),
    # test/e2e/kubectl/kubectl.go "should support exec"
    ("upstream echo running in container", ["echo", "running", "in", "container"], None, {}, {}, 0,
     b"running in container\n", b"", 0),
    ("upstream very long echo", ["echo", "a" * 20000], None, {}, {}, 0, b"a" * 20000 + b"\n", b"", 0),
    ("upstream noninteractive stdin cat", ["cat"], [b"abcd1234"], {}, {}, 0, b"abcd1234", b"", 0),
    ("upstream exit 0", ["/bin/sh", "-c", "exit 0"], None, {}, {}, 0, b"", b"", 0),
    ("upstream exit 42", ["/bin/sh", "-c", "exit 42"], None, {}, {}, 0, b"", b"", 42),
    ("upstream cat && exit 42", ["/bin/sh", "-c", "cat && exit 42"], [b"abcd1234"], {}, {}, 0, b"abcd1234", b"", 42),
]


@pytest.mark.parametrize(("argv", "stdin", "files", "env", "uid", "out", "err", "code"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
async def test_exec_table(argv: list[str], stdin: list[bytes] | None, files: dict[str, bytes], env: dict[str, str],
                          uid: int, out: bytes, err: bytes, code: int) -> None:
    ctx = make_ctx(FakeClock(), dict(files), env, uid)
    result = await run(argv, ctx, stdin)
    assert (result.out, result.err, result.code) == (out, err, code)


async def test_gzip_from_pipe_decompresses_to_the_string() -> None:
    result = await run(sh('echo -n "This is a test string" | gzip'), make_ctx(FakeClock()))
    assert result.code == 0 and result.err == b""
    assert result.out[:2] == b"\x1f\x8b"
    assert gzip.decompress(result.out) == b"This is a test string"


@pytest.mark.parametrize(("argv", "message"), [
    (["nosuch"], 'exec: "nosuch": executable file not found in $PATH'),
    (["/bin/nosuch"], 'exec: "/bin/nosuch": stat /bin/nosuch: no such file or directory'),
    (["./x"], 'exec: "./x": stat ./x: no such file or directory'),
    (["cd", "/"], 'exec: "cd": executable file not found in $PATH'),  # a shell builtin, not a program
    (["export"], 'exec: "export": executable file not found in $PATH'),
])
async def test_unknown_program_raises_exec_not_found(argv: list[str], message: str) -> None:
    with pytest.raises(ExecNotFound) as info:
        await run(argv, make_ctx(FakeClock()))
    assert str(info.value) == message


async def test_program_not_on_path_is_not_found() -> None:
    ctx = make_ctx(FakeClock(), env={"PATH": "/opt/bin"})
    with pytest.raises(ExecNotFound):
        await run(["ls"], ctx)
    assert (await run(["/bin/ls", "/"], ctx)).code == 0


async def test_interactive_shell_answers_each_line_before_the_next_arrives() -> None:
    stdin = QueueStdin()
    events: list[tuple[str, bytes]] = []
    got_output = asyncio.Event()

    async def on_out(data: bytes) -> None:
        events.append(("out", data))
        got_output.set()

    async def on_err(data: bytes) -> None:
        events.append(("err", data))
        got_output.set()

    task = asyncio.ensure_future(run_exec(["/bin/sh"], make_ctx(FakeClock()), stdin, on_out, on_err))
    for line in (b"echo test string 1\n", b"echo test string 2 >&2\n"):
        got_output.clear()
        events.append(("in", line))
        await stdin.queue.put(line)
        await asyncio.wait_for(got_output.wait(), timeout=5)
    events.append(("in", b"exit\n"))
    await stdin.queue.put(b"exit\n")
    assert await asyncio.wait_for(task, timeout=5) == 0
    assert events == [
        ("in", b"echo test string 1\n"), ("out", b"test string 1\n"),
        ("in", b"echo test string 2 >&2\n"), ("err", b"test string 2\n"),
        ("in", b"exit\n"),
    ]


async def test_cat_echoes_each_chunk_as_it_arrives_and_exits_0_at_eof() -> None:
    stdin = QueueStdin()
    out: list[bytes] = []
    got = asyncio.Event()

    async def on_out(data: bytes) -> None:
        out.append(data)
        got.set()

    async def on_err(data: bytes) -> None:
        raise AssertionError(data)

    task = asyncio.ensure_future(run_exec(["/bin/sh", "-c", "cat"], make_ctx(FakeClock()), stdin, on_out, on_err))
    await stdin.queue.put(b"test-close\n")
    await asyncio.wait_for(got.wait(), timeout=5)
    assert out == [b"test-close\n"] and not task.done()
    await stdin.queue.put(None)
    assert await asyncio.wait_for(task, timeout=5) == 0


async def test_endless_loop_streams_and_does_not_block_the_loop() -> None:
    clock = FakeClock()
    lines: list[bytes] = []
    three = asyncio.Event()

    async def on_out(data: bytes) -> None:
        lines.append(data)
        if len(lines) == 3:
            three.set()

    async def on_err(data: bytes) -> None:
        raise AssertionError(data)

    task = asyncio.ensure_future(
        run_exec(sh("while true; do date; sleep 5; done"), make_ctx(clock), None, on_out, on_err))
    await asyncio.wait_for(three.wait(), timeout=5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert lines[:3] == [b"Thu Dec  3 18:05:52 UTC 2026\n", b"Thu Dec  3 18:05:57 UTC 2026\n",
                         b"Thu Dec  3 18:06:02 UTC 2026\n"]


async def test_busy_loop_without_sleep_yields_to_the_event_loop() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def discard(data: bytes) -> None:
        pass

    other = asyncio.ensure_future(ticker())
    task = asyncio.ensure_future(run_exec(sh("while :; do :; done"), make_ctx(FakeClock()), None, discard, discard))
    await asyncio.sleep(0.05)
    assert not task.done() and ticks > 10
    task.cancel()
    other.cancel()
    await asyncio.gather(task, other, return_exceptions=True)


async def test_output_is_written_per_command_not_at_the_end() -> None:
    clock = FakeClock()
    writes: list[tuple[float, bytes]] = []

    async def on_out(data: bytes) -> None:
        writes.append((clock.now, data))

    async def on_err(data: bytes) -> None:
        raise AssertionError(data)

    code = await run_exec(sh("echo a; sleep 2m; echo b"), make_ctx(clock), None, on_out, on_err)
    assert code == 0
    assert writes == [(NOW, b"a\n"), (NOW + 120, b"b\n")]
    assert clock.sleeps == [120.0]


@pytest.mark.parametrize(("arg", "seconds"), [("1", 1.0), ("1.5", 1.5), ("2m", 120.0), ("1h", 3600.0), ("1d", 86400.0)])
async def test_sleep_uses_the_injected_sleep(arg: str, seconds: float) -> None:
    clock = FakeClock()
    assert (await run(["sleep", arg], make_ctx(clock))).code == 0
    assert clock.sleeps == [seconds]


async def test_redirected_output_persists_for_the_next_exec() -> None:
    files: dict[str, bytes] = {}
    clock = FakeClock()
    first = await run(sh("echo hello > /tmp/out.txt; echo more >> /tmp/out.txt"), make_ctx(clock, files))
    assert (first.out, first.err, first.code) == (b"", b"", 0)
    assert files == {"/tmp/out.txt": b"hello\nmore\n"}
    second = await run(["cat", "/tmp/out.txt"], make_ctx(clock, files))
    assert (second.out, second.code) == (b"hello\nmore\n", 0)
    third = await run(sh("echo new > /tmp/out.txt; cat /tmp/out.txt"), make_ctx(clock, files))
    assert third.out == b"new\n"


async def test_mkdir_touch_rm_tee_change_the_filesystem() -> None:
    files: dict[str, bytes] = {}
    clock = FakeClock()
    ctx = make_ctx(clock, files)
    result = await run(sh("mkdir -p /srv/a/b && touch /srv/a/f && echo t | tee /srv/a/g && ls /srv/a"), ctx)
    assert (result.out, result.err, result.code) == (b"t\nb\nf\ng\n", b"", 0)
    assert "/srv/a/b" in ctx.dirs and files == {"/srv/a/f": b"", "/srv/a/g": b"t\n"}
    again = await run(sh("mkdir /srv/a/b; rm /srv/a/b; rm /nope; rm -r /srv; ls /srv"), ctx)
    assert again.err == (b"mkdir: can't create directory '/srv/a/b': File exists\n"
                         b"rm: '/srv/a/b' is a directory\n"
                         b"rm: can't remove '/nope': No such file or directory\n"
                         b"ls: /srv: No such file or directory\n")
    assert files == {} and not any(d.startswith("/srv") for d in ctx.dirs)


async def test_gzip_file_replaces_it_with_the_gz() -> None:
    files = {"/tmp/a.txt": b"payload"}
    result = await run(sh("gzip /tmp/a.txt && ls /tmp && gunzip -c /tmp/a.txt.gz"), make_ctx(FakeClock(), files))
    assert (result.out, result.code) == (b"a.txt.gz\npayload", 0)
    assert list(files) == ["/tmp/a.txt.gz"]


async def test_uptime_counts_days_and_hours() -> None:
    clock = FakeClock()
    ctx = make_ctx(clock)
    ctx.started = NOW - (2 * 86400 + 3 * 3600 + 7 * 60 + 5)
    result = await run(["uptime"], ctx)
    assert result.out == b" 18:05:52 up 2 days,  3:07,  0 users,  load average: 0.00, 0.00, 0.00\n"


async def test_pseudo_interactive_sh_exits_on_exit_without_stdin_eof() -> None:
    """test/e2e/kubectl/kubectl.go "should support exec": `sh` fed "echo hi\\nexit\\n" by a reader
    that never closes must print "hi" and end."""
    stdin = QueueStdin()
    out = bytearray()

    async def on_out(data: bytes) -> None:
        out.extend(data)

    async def on_err(data: bytes) -> None:
        raise AssertionError(data)

    await stdin.queue.put(b"echo hi\nexit\n")
    code = await asyncio.wait_for(run_exec(["sh"], make_ctx(FakeClock()), stdin, on_out, on_err), timeout=5)
    assert (bytes(out), code) == (b"hi\n", 0)


async def test_tar_round_trip_as_kubectl_cp_runs_it() -> None:
    """kubectl cp: `tar cf - SRC` in the source container, `tar -xmf - -C DIR` in the target."""
    clock = FakeClock()
    src_files = {"/data/a.txt": b"alpha\n", "/data/sub/b.bin": bytes(range(256))}
    packed = await run(["tar", "cf", "-", "/data"], make_ctx(clock, src_files))
    assert packed.code == 0
    assert packed.err == b"tar: removing leading '/' from member names\n"
    dst_files: dict[str, bytes] = {}
    dst = make_ctx(clock, dst_files)
    unpacked = await run(["tar", "-xmf", "-", "-C", "/tmp/"], dst, [packed.out[:700], packed.out[700:]])
    assert (unpacked.out, unpacked.err, unpacked.code) == (b"", b"", 0)
    assert dst_files == {"/tmp/data/a.txt": b"alpha\n", "/tmp/data/sub/b.bin": bytes(range(256))}
    listing = await run(["ls", "/tmp/data"], dst)
    assert listing.out == b"a.txt\nsub\n"
    missing = await run(["tar", "-xmf", "-", "-C", "/nope"], dst, [packed.out])
    assert (missing.err, missing.code) == (b"tar: can't change directory to '/nope': No such file or directory\n", 1)


async def test_shell_on_a_terminal_prompts_on_stderr() -> None:
    """A shell whose stdin is a tty is interactive: PS1 (`/ # ` for root in /) before each command,
    PS2 inside an unfinished one; `exit` ends it."""
    ctx = make_ctx(FakeClock())
    ctx.tty = True
    result = await run(["sh"], ctx, [b"echo hi\n", b"if true\n", b"then cd; fi\n", b"exit 3\n"])
    assert (result.out, result.err, result.code) == (b"hi\n", b"/ # / # > ~ # ", 3)


async def test_ps_lists_the_container_command_as_pid_1_and_the_exec() -> None:
    clock = FakeClock()
    ctx = make_ctx(clock)
    ctx.command = ("sleep", "3600")
    direct = await run(["ps"], ctx)
    lines = direct.out.decode().splitlines()
    assert lines[0] == "PID   USER     TIME  COMMAND"
    assert lines[1] == "    1 root      0:00 sleep 3600"
    assert re.fullmatch(r" +\d+ root      0:00 ps", lines[2]) and len(lines) == 3
    via_shell = (await run(sh("ps aux"), ctx)).out.decode().splitlines()
    assert [ln.split(None, 3)[3] for ln in via_shell[1:]] == ["sleep 3600", "/bin/sh", "ps aux"]
    pids = [int(ln.split()[0]) for ln in via_shell[1:]]
    assert pids[0] == 1 and pids[1] < pids[2]


async def test_a_file_or_substitution_past_the_limit_fails_as_a_full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """`yes > /tmp/f` must not fill the server's memory: the write fails with ENOSPC."""
    import minik3s.api.helpers.shell as shell_mod
    monkeypatch.setattr(shell_mod, "FILE_LIMIT", 4096)
    files: dict[str, bytes] = {}
    r = await run(sh("yes > /tmp/big; echo status $?"), make_ctx(FakeClock(), files))
    assert r.err == b"yes: write error: No space left on device\n"
    assert r.out == b"status 1\n"
    assert 0 < len(files["/tmp/big"]) <= 4096
    r = await run(sh('x=$(yes); echo "${#x}"'), make_ctx(FakeClock(), files))
    assert r.err == b"yes: write error: No space left on device\n"
    assert int(r.out) <= 4096


async def test_a_busy_loop_is_throttled_and_leaves_the_event_loop_most_of_the_time() -> None:
    """`while :; do :; done` is paced like a CPU limit: other tasks keep getting the loop."""
    import time as _time
    ticks = 0

    async def other() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    spinner = asyncio.ensure_future(run(sh("while :; do :; done"), make_ctx(FakeClock())))
    ticker = asyncio.ensure_future(other())
    start = _time.process_time()
    await asyncio.sleep(0.5)
    used = _time.process_time() - start
    spinner.cancel()
    ticker.cancel()
    for t in (spinner, ticker):
        with pytest.raises(asyncio.CancelledError):
            await t
    assert ticks > 100  # a 1 ms ticker got its turns
    assert used < 0.4  # the spinning exec took well under the whole half second of CPU


@pytest.mark.parametrize(("script", "err"), [
    ("echo x > /etc/cfg/new", b"/bin/sh: can't create /etc/cfg/new: Read-only file system\n"),
    ("touch /etc/cfg/new", b"touch: /etc/cfg/new: Read-only file system\n"),
    ("rm /etc/cfg/key", b"rm: can't remove '/etc/cfg/key': Read-only file system\n"),
    ("mkdir /etc/cfg/d", b"mkdir: can't create directory '/etc/cfg/d': Read-only file system\n"),
    ("echo x | tee /etc/cfg/t >/dev/null", b"tee: can't open '/etc/cfg/t': Read-only file system\n"),
], ids=["redirect", "touch", "rm", "mkdir", "tee"])
async def test_writes_under_a_read_only_mount_fail_with_erofs(script: str, err: bytes) -> None:
    files = {"/etc/cfg/key": b"v"}
    ctx = make_ctx(FakeClock(), files)
    ctx.readonly = ("/etc/cfg",)
    r = await run(sh(script), ctx)
    assert (r.err, r.code) == (err, 1)
    assert files == {"/etc/cfg/key": b"v"}
    ok = await run(sh("echo x > /tmp/new && cat /etc/cfg/key"), ctx)  # elsewhere writes work
    assert (ok.out, ok.code) == (b"v", 0)


async def test_endless_recursion_dies_as_a_stack_overflow() -> None:
    r = await run(sh("f() { f; }; f"), make_ctx(FakeClock()))
    assert r.code == 139


async def test_a_read_only_root_keeps_its_writable_mounts_writable() -> None:
    """readOnlyRootFilesystem with an emptyDir at /tmp: the deepest mount decides."""
    ctx = make_ctx(FakeClock(), {})
    ctx.readonly, ctx.writable = ("/",), ("/tmp",)
    r = await run(sh("echo x > /tmp/ok && echo y > /var/no"), ctx)
    assert (r.err, r.code) == (b"/bin/sh: can't create /var/no: Read-only file system\n", 1)
    assert ctx.files == {"/tmp/ok": b"x\n"}


@pytest.mark.parametrize(("argv", "err"), [
    (["date", "foo"], b"date: invalid date 'foo'\n"),
    (["date", "12312359"], b"date: can't set date: Operation not permitted\n"),
    (["date", "2026-12-03 10:00"], b"date: can't set date: Operation not permitted\n"),
], ids=["unparsable", "MMDDhhmm", "iso"])
async def test_date_operands_fail_as_busybox(argv: list[str], err: bytes) -> None:
    r = await run(argv, make_ctx(FakeClock()))
    assert (r.out, r.err, r.code) == (b"", err, 1)


async def test_dd_writes_blocks_and_reports_on_stderr() -> None:
    """What kr8s' nginx fixture runs: dd if=/dev/random of=FILE bs=4M count=10."""
    files: dict[str, bytes] = {}
    ctx = make_ctx(FakeClock(), files)
    r = await run(["dd", "if=/dev/random", "of=/tmp/foo.dat", "bs=4M", "count=10"], ctx)
    assert r.code == 0 and r.out == b""
    assert len(files["/tmp/foo.dat"]) == 40 * 1024 * 1024
    lines = r.err.decode().splitlines()
    assert lines[:2] == ["10+0 records in", "10+0 records out"]
    assert re.fullmatch(r"41943040 bytes \(40\.0MB\) copied, \d+\.\d{6} seconds, [\d.]+[KMG]?B/s", lines[2])
    r = await run(sh("printf abcdefghij | dd bs=3 skip=1 count=2 status=none"), ctx)
    assert (r.out, r.err, r.code) == (b"defghi", b"", 0)
    r = await run(["dd", "if=/tmp/foo.dat", "of=/tmp/part", "bs=1000", "count=1", "status=noxfer"], ctx)
    assert (r.err, len(files["/tmp/part"])) == (b"1+0 records in\n1+0 records out\n", 1000)
