"""Every hook is called through pluggy: argument pruning, tryfirst/trylast and wrappers behave
as pluggy documents, and a raising implementation is reported by its plugin's name."""

from __future__ import annotations

import textwrap

from nomos_forensics import plugins
from nomos_forensics.card import Card, Stats
from nomos_forensics.config import Config
from nomos_forensics.engine import build_ruleset, review
from nomos_forensics.model import Session, SessionInfo, message_from_mapping

RULE = '''
from nomos_forensics import Rule, hookimpl

class {cls}(Rule):
    """{name} for tests.

    Detects: nothing.
    Root cause: none.
    Fix: none.
    """
    code = "{code}"
    name = "{name}"
    def check(self, session, ctx):
        yield self.finding("{name} fired")
'''


def _plugin(tmp_path, name: str, body: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return str(path)


def _session() -> Session:
    info = SessionInfo(id="00000000-0000-0000-0000-000000000001", title="t", status="completed",
                       goal=None, model=None, created_at=None, updated_at=None)
    row = {"id": 1, "role": "user", "content": {"text": "hello"}, "created_at": None}
    return Session(info, [message_from_mapping(row)])


def _card(registry) -> Card:
    ruleset = build_ruleset(registry, Config(), select=["X9"])
    return review(_session(), ruleset, manager=registry.manager)


def test_rules_hook_is_called_through_pluggy_with_tryfirst_order(tmp_path):
    first = _plugin(tmp_path, "first", "from nomos_forensics import hookimpl\n"
                    + RULE.format(cls="A", code="X901", name="from-first")
                    + "\n@hookimpl(tryfirst=True)\ndef nomos_forensics_rules():\n    return [A]\n")
    second = _plugin(tmp_path, "second", RULE.format(cls="B", code="X902", name="from-second")
                     + "\n@hookimpl\ndef nomos_forensics_rules():\n    return [B]\n")
    registry = plugins.load([second, first])
    assert not registry.problems
    assert [s.name for s in registry.rules if s.code.startswith("X9")] == ["from-first", "from-second"]


def test_one_raising_rules_hook_does_not_hide_other_plugins(tmp_path):
    broken = _plugin(tmp_path, "broken", "from nomos_forensics import hookimpl\n"
                     "@hookimpl\ndef nomos_forensics_rules():\n    raise RuntimeError('no rules today')\n")
    good = _plugin(tmp_path, "good", RULE.format(cls="G", code="X903", name="good-rule")
                   + "\n@hookimpl\ndef nomos_forensics_rules():\n    return [G]\n")
    registry = plugins.load([broken, good])
    assert [s.name for s in registry.rules if s.code.startswith("X9")] == ["good-rule"]
    assert len(registry.problems) == 1
    assert "no rules today" in registry.problems[0].message and registry.problems[0].source.endswith("broken.py")


def test_card_hook_may_take_fewer_arguments_and_runs_in_pluggy_order(tmp_path):
    log = tmp_path / "order.log"
    late = _plugin(tmp_path, "late", f"""
        from nomos_forensics import hookimpl
        @hookimpl(trylast=True)
        def nomos_forensics_card(card):
            open({str(log)!r}, "a").write("late\\n")
        """)
    early = _plugin(tmp_path, "early", f"""
        from nomos_forensics import hookimpl
        @hookimpl(tryfirst=True)
        def nomos_forensics_card(session):
            open({str(log)!r}, "a").write("early " + session.info.title + "\\n")
        """)
    card = _card(plugins.load([early, late]))
    assert card.errors == []
    assert log.read_text().splitlines() == ["early t", "late"]


def test_card_hook_wrapper_runs_around_the_others(tmp_path):
    wrapper = _plugin(tmp_path, "wrap", """
        from nomos_forensics import hookimpl
        @hookimpl(wrapper=True)
        def nomos_forensics_card(card):
            card.objective = "before"
            result = yield
            card.objective += " after"
            return result
        """)
    inner = _plugin(tmp_path, "inner", """
        from nomos_forensics import hookimpl
        @hookimpl
        def nomos_forensics_card(card):
            card.objective += " inner"
        """)
    card = _card(plugins.load([wrapper, inner]))
    assert card.errors == []
    assert card.objective == "before inner after"


def test_raising_card_hook_becomes_a_card_error_naming_its_plugin(tmp_path):
    boom = _plugin(tmp_path, "boom", """
        from nomos_forensics import hookimpl
        def helper():
            raise ValueError("card hook broke")
        @hookimpl
        def nomos_forensics_card(card, session):
            helper()
        """)
    registry = plugins.load([boom])
    card = _card(registry)
    assert [(e.type, e.message) for e in card.errors] == [("ValueError", "card hook broke")]
    assert "boom" in card.errors[0].rule
    assert isinstance(card.stats, Stats)
