"""Go duration parsing and printing (minik3s.utils.duration): time.ParseDuration and
time.Duration.String()."""

from __future__ import annotations

import pytest

from minik3s.utils.duration import format_duration, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("0", 0.0), ("5m", 300.0), ("1h30m", 5400.0), ("90s", 90.0), ("1.5s", 1.5), ("250ms", 0.25), ("2h0m0s", 7200.0),
])
def test_valid(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "5", "5 m", "-1s", "1d", "m5", " 5m", "5m "])
def test_invalid(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


@pytest.mark.parametrize(("seconds", "text"), [
    # Go: time.Duration(n).String() for each of these
    (0, "0s"), (1e-9, "1ns"), (999e-9, "999ns"), (1.5e-6, "1.5µs"), (0.005251063, "5.251063ms"),
    (0.5, "500ms"), (1, "1s"), (46.9444707, "46.9444707s"), (60, "1m0s"), (90.25, "1m30.25s"),
    (3600, "1h0m0s"), (3605, "1h0m5s"), (-2.5, "-2.5s"), (59.9999999999, "1m0s"),
])
def test_format_is_gos_string(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
