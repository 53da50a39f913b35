"""The server's descheduler flags parse into ServerConfig fields (bad durations are refused)."""

from __future__ import annotations

import pytest

from minik3s.cli import build_parser


def test_descheduler_flags_defaults_and_values() -> None:
    p = build_parser()
    a = p.parse_args(["server"])
    assert (a.descheduler_policy, a.descheduling_interval, a.descheduler_dry_run,
            a.descheduler_loop_avoidance) == (None, 300.0, False, True)
    a = p.parse_args(["server", "--descheduler-policy", "p.yaml", "--descheduling-interval", "1m30s",
                      "--descheduler-dry-run", "--no-descheduler-loop-avoidance"])
    assert (a.descheduler_policy, a.descheduling_interval, a.descheduler_dry_run,
            a.descheduler_loop_avoidance) == ("p.yaml", 90.0, True, False)
    assert p.parse_args(["server", "--descheduling-interval", "2.5"]).descheduling_interval == 2.5


@pytest.mark.parametrize("bad", ["soon", "0", "-1s", "5 m"])
def test_bad_interval_is_refused(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["server", "--descheduling-interval", bad])
    assert "--descheduling-interval" in capsys.readouterr().err
