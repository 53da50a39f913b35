"""Go duration parsing (minik3s.utils.duration)."""

from __future__ import annotations

import pytest

from minik3s.utils.duration import parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("0", 0.0), ("5m", 300.0), ("1h30m", 5400.0), ("90s", 90.0), ("1.5s", 1.5), ("250ms", 0.25), ("2h0m0s", 7200.0),
])
def test_valid(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "5 m", "-1s", "1d", "m5", " 5m", "5m "])
def test_invalid(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)
