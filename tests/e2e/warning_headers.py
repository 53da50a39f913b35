"""The texts of a response's `Warning: 299 - "..."` headers, as kubectl prints them."""

from __future__ import annotations

import re

import httpx

_ENTRY = re.compile(r'299 - "((?:[^"\\]|\\.)*)"')


def warnings_of(r: httpx.Response) -> list[str]:
    """The texts of the `299 - "text"` entries of the Warning headers, in order."""
    text = ", ".join(r.headers.get_list("Warning"))
    return [m.replace('\\"', '"') for m in _ENTRY.findall(text)]
