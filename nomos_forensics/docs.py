"""Generate docs/rules.md from the loaded rules' metadata and docstrings, and
docs/plugin_hooks.md from the hookspecs' docstrings.

Run `python -m nomos_forensics.docs > docs/rules.md` and
`python -m nomos_forensics.docs hooks > docs/plugin_hooks.md`; tests/test_docs.py keeps both current.
"""

from __future__ import annotations

import inspect
import json
import sys

from . import hookspecs, plugins


def rules_markdown() -> str:
    registry = plugins.load()
    lines = [
        "# Rules reference",
        "",
        "Generated from the rules' docstrings and metadata by `python -m nomos_forensics.docs`;"
        " do not edit by hand.",
        "",
        "| code | name | severity | needs | summary |",
        "|---|---|---|---|---|",
    ]
    for spec in registry.rules:
        cls = spec.cls
        needs = ", ".join(sorted(n.value for n in cls.needs))
        lines.append(f"| {cls.code} | [`{cls.name}`](#{cls.name}) | {cls.default_severity().label} | {needs} | {cls.summary()} |")
    for spec in registry.rules:
        cls = spec.cls
        sections = cls.sections()
        lines += ["", f"## {cls.name}", "", f"`{cls.code}` · default severity **{cls.default_severity().label}**"
                  f" · source: {spec.source}", "", sections.get("summary", "")]
        for title, key in (("Detects", "detects"), ("Why it matters", "why it matters"),
                           ("Root cause", "root cause"), ("Fix", "fix")):
            if key in sections:
                lines += ["", f"**{title}.** {sections[key]}"]
        if cls.config:
            lines += ["", f"**Config** (`[rules.{cls.name}]` in nomos-forensics.toml):", "",
                      "| key | type | default | range | description |", "|---|---|---|---|---|"]
            for key, option in cls.option_specs().items():
                described = option.to_json()
                bounds = ", ".join(f"{sign} {described[k]:g}" for k, sign in (("minimum", "≥"), ("maximum", "≤"))
                                   if k in described)
                lines.append(f"| `{key}` | {described['type']} | `{json.dumps(described['default'])}` |"
                             f" {bounds} | {described['description']} |")
        requires = {**{t: list(c) for t, c in (cls.requires or {}).items()}}
        if requires:
            lines += ["", "**Requires:** " + "; ".join(f"{t} ({', '.join(c)})" for t, c in requires.items())]
    return "\n".join(lines) + "\n"


def hooks_markdown() -> str:
    lines = [
        "# Plugin hooks",
        "",
        "Generated from `nomos_forensics/hookspecs.py` by `python -m nomos_forensics.docs hooks`;"
        " do not edit by hand.",
        "",
        "Implement a hook with `@nomos_forensics.hookimpl` on a function of that name in your plugin"
        " module. Hooks are called through pluggy: an implementation may accept fewer arguments than"
        " the spec names, `tryfirst`/`trylast` order it, and `wrapper=True` wraps the others.",
    ]
    for name, function in inspect.getmembers(hookspecs, inspect.isfunction):
        if not name.startswith(hookspecs.PROJECT + "_"):
            continue
        signature = str(inspect.signature(function)).replace("'", "")
        lines += ["", f"## `{name}{signature}`", "", inspect.cleandoc(function.__doc__ or "")]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(hooks_markdown() if sys.argv[1:] == ["hooks"] else rules_markdown(), end="")
