"""Go's text/tabwriter, as kubectl lays out tables and describe output (layer L5, CLI).
"""

from __future__ import annotations

from collections.abc import Callable

Styler = Callable[[int, int, str], str]


class TabWriter:
    """Go's text/tabwriter (elastic tab stops), as kubectl uses it (liggitt/tabwriter).

    Text is split into lines and cells at tabs; a cell terminated by a tab belongs to a column,
    the last cell of a line does not. A *column block* is a run of consecutive lines that all have
    a tab-terminated cell in that column; its width is max(minwidth, longest cell + padding).
    With `remember_widths` a column never shrinks across `render` calls (kubectl `get -w`).

    Worked example (minwidth 6, padding 3): lines "NAME\\tAGE" and "web-1\\t5m" give column 0 the
    width max(6, 5 + 3) = 8, so the output is "NAME    AGE" and "web-1   5m".
    """

    def __init__(self, *, minwidth: int = 6, padding: int = 3, remember_widths: bool = False) -> None:
        self.minwidth = minwidth
        self.padding = padding
        self.remember = remember_widths
        self._max_widths: list[int] = []

    def render(self, text: str, *, style: Styler | None = None) -> str:
        raw = text.split("\n")
        trailing_newline = raw and raw[-1] == ""
        if trailing_newline:
            raw.pop()
        lines = [ln.split("\t") for ln in raw]
        out: list[str] = []
        widths: list[int] = []

        def write_lines(line0: int, line1: int) -> None:
            for i in range(line0, line1):
                cells = lines[i]
                parts = []
                for j, c in enumerate(cells):
                    shown = style(i, j, c) if style else c
                    if j < len(widths):
                        parts.append(shown + " " * max(0, widths[j] - len(c)))
                    else:
                        parts.append(shown)
                out.append("".join(parts))

        def fmt(line0: int, line1: int) -> None:
            column = len(widths)
            this = line0
            while this < line1:
                if column >= len(lines[this]) - 1:
                    this += 1
                    continue
                write_lines(line0, this)
                line0 = this
                width = self.minwidth
                while this < line1 and column < len(lines[this]) - 1:
                    width = max(width, len(lines[this][column]) + self.padding)
                    this += 1
                if self.remember:
                    if column < len(self._max_widths):
                        width = max(width, self._max_widths[column])
                        self._max_widths[column] = width
                    else:
                        self._max_widths.append(width)
                widths.append(width)
                fmt(line0, this)
                widths.pop()
                line0 = this
            write_lines(line0, line1)

        fmt(0, len(lines))
        return "\n".join(out) + ("\n" if trailing_newline else "")
