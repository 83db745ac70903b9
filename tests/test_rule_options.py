"""Typed rule options: declared on the rule, validated once at start-up, shown by `rules`."""

from __future__ import annotations

import json

import pytest

from nomos_forensics import Option, plugins
from nomos_forensics.config import Config
from nomos_forensics.engine import build_ruleset
from nomos_forensics.errors import ConfigError

from .helpers import invoke

BUILTINS = [s for s in plugins.load().rules if s.cls.config]


@pytest.mark.parametrize("value, expected", [(3, 3), (3.0, 3), ("x", ValueError), (True, ValueError), (2.5, ValueError)])
def test_integer_option(value, expected):
    option = Option(30, "calls", minimum=1)
    if expected is ValueError:
        with pytest.raises(ValueError, match="expected an integer"):
            option.convert(value)
    else:
        assert option.convert(value) == expected


def test_number_option_refuses_non_finite_and_out_of_range():
    option = Option(0.5, "share", minimum=0.0, maximum=1.0)
    assert option.convert(1) == 1.0
    for bad in (float("nan"), float("inf"), "0.5"):
        with pytest.raises(ValueError, match="expected a number"):
            option.convert(bad)
    with pytest.raises(ValueError, match="at most 1"):
        option.convert(1.5)


def test_list_option_accepts_a_comma_string_and_dedupes():
    option = Option(["a"], "names")
    assert option.convert("b, c,b") == ["b", "c"]
    with pytest.raises(ValueError, match="list of strings"):
        option.convert([1, 2])


def test_wrong_type_fails_once_at_start_up_naming_rule_and_key():
    registry = plugins.load()
    with pytest.raises(ConfigError, match=r"rule tool-fanout: option max_calls: expected an integer, got 'thirty'"):
        build_ruleset(registry, Config(rules={"tool-fanout": {"max_calls": "thirty"}}))


def test_wrong_type_from_a_config_file_is_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[rules.tool-fanout]\nmax_calls = "thirty"\n')
    r = invoke(capsys, "rules", "--config", str(bad))
    assert r.code == 2
    assert r.err.strip().count("\n") == 0 and "max_calls" in r.err and "tool-fanout" in r.err


@pytest.mark.parametrize("spec", BUILTINS, ids=[s.name for s in BUILTINS])
def test_every_builtin_option_is_typed_and_described(spec):
    for key, option in spec.cls.option_specs().items():
        assert isinstance(spec.cls.config[key], Option), f"{spec.name}.{key} is untyped"
        assert option.type_name != "any" and len(option.description) > 10
        assert option.convert(option.default) == spec.cls().options[key]


def test_untyped_plugin_options_keep_working():
    from nomos_forensics import Rule

    class Legacy(Rule):
        code, name, config = "X990", "legacy", {"anything": 3}

    assert Legacy({"anything": "three"}).options == {"anything": "three"}


def test_rules_json_shows_each_option(capsys):
    rules = {r["name"]: r for r in json.loads(invoke(capsys, "rules", "--format", "json").out)["rules"]}
    assert rules["tool-fanout"]["options"]["max_calls"] == {
        "type": "integer", "default": 30, "minimum": 1, "description": rules["tool-fanout"]["options"]["max_calls"]["description"]}
    assert rules["tool-fanout"]["config"] == {"max_calls": 30, "alike": 0.5, "min_run": 10}
