"""Terminal colour for the client commands (layer L5, CLI): on only for terminals without NO_COLOR.
"""

from __future__ import annotations

import os
from typing import TextIO


class Palette:
    """ANSI colour, enabled only for terminals and when NO_COLOR is unset (https://no-color.org)."""

    CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    @staticmethod
    def for_stream(stream: TextIO) -> Palette:
        isatty = getattr(stream, "isatty", None)
        return Palette(bool(isatty and isatty()) and not os.environ.get("NO_COLOR"))

    def paint(self, style: str, text: str) -> str:
        if not self.enabled or not text or style not in self.CODES:
            return text
        return f"\033[{self.CODES[style]}m{text}\033[0m"


_GOOD = {"Running", "Ready", "Active", "Succeeded", "Completed", "Bound", "True", "Available"}
_WARN = {"Pending", "ContainerCreating", "Terminating", "Unknown", "PodInitializing", "SchedulingGated"}
_BAD = {
    "Failed",
    "Error",
    "CrashLoopBackOff",
    "ErrImagePull",
    "ImagePullBackOff",
    "Evicted",
    "OOMKilled",
    "NotReady",
    "False",
    "Unschedulable",
}


def status_style(text: str) -> str:
    """Colour for a STATUS-like cell: `Ready,SchedulingDisabled` → yellow, `Init:0/1` → yellow."""
    parts = [p for p in text.split(",") if p]
    if any(p in _BAD or p.startswith("Init:Err") or p.startswith("ExitCode:") for p in parts):
        return "red"
    if any(p in _WARN or p.startswith("Init:") or p == "SchedulingDisabled" for p in parts):
        return "yellow"
    if parts and all(p in _GOOD for p in parts):
        return "green"
    return ""
