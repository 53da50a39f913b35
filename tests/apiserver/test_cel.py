"""apiserver.cel: the matcher's verdicts and texts, and variables converted to CEL once."""

from __future__ import annotations

from apiserver import cel


def test_match_conditions_false_wins_over_failures_and_failures_are_named() -> None:
    variables = {"object": {"metadata": {"name": "web", "labels": {"app": "web"}}}}
    assert cel.match_conditions(["object.metadata.nope == 'x'", "false"], variables) == (False, [])
    matched, failures = cel.match_conditions(["object.metadata.nope == 'x'", "object.metadata.name", "true"],
                                             variables)
    assert matched is True
    assert failures == ["expression 'object.metadata.nope == 'x'' resulted in error: no such key: nope",
                        "expression 'object.metadata.name' resulted in error: no such overload: "
                        "the result is not a bool"]
    assert cel.check("object.metadata.labels.app.upperAscii() == 'WEB'", variables) is True


def test_variables_are_converted_once_and_shared_by_their_extensions() -> None:
    base = cel.Variables({"object": {"spec": {"replicas": 3}}, "request": {"operation": "CREATE"}})
    one, two = base.with_values(params=None), base.with_values(params={"max": 5})
    assert one.activation()["object"] is two.activation()["object"]  # one conversion for both
    assert cel.run("object.spec.replicas <= params.max", two) is True
    two.set("params", {"max": 2})  # a replaced value is converted again
    assert cel.run("object.spec.replicas <= params.max", two) is False


def test_find_and_matches_run_in_linear_time_with_go_syntax() -> None:
    # Go's RE2: a pattern that backtracks exponentially in Python's `re` answers at once
    evil = {"object": {"data": {"x": "a" * 5000 + "b"}}}
    assert cel.check("object.data.x.find('^(a+)+$') == ''", evil) is True
    assert cel.check("object.data.x.matches('^(a+)+$')", evil) is False
    assert cel.check("object.data.x.findAll('a{2}', 3) == ['aa', 'aa', 'aa']", evil) is True
    # a pattern Go refuses is an evaluation error, not a Python look-ahead
    matched, failures = cel.match_conditions(["object.data.x.find('(?=a)') == ''"], evil)
    assert matched is True and failures and "invalid or unsupported Perl syntax" in failures[0]
