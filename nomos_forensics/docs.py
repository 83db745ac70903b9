"""Generate docs/rules.md from the loaded rules' metadata and docstrings.

Run `python -m nomos_forensics.docs > docs/rules.md`; tests/test_docs.py keeps it current.
"""

from __future__ import annotations

import json

from . import plugins


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
            lines += ["", "**Config** (`[tool.nomos-forensics.rules." + cls.name + "]`):", ""]
            lines += [f"- `{k}` = `{json.dumps(v)}`" for k, v in cls.config.items()]
        requires = {**{t: list(c) for t, c in (cls.requires or {}).items()}}
        if requires:
            lines += ["", "**Requires:** " + "; ".join(f"{t} ({', '.join(c)})" for t, c in requires.items())]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(rules_markdown(), end="")
