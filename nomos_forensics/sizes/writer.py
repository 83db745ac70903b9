"""The text writer behind the table and markdown reports: headings, lines, grids, sections not
available, and the small value formats they share."""

from __future__ import annotations

from typing import Any

from ..render import Format, output_width, table


class Writer:
    """Lines of a table or markdown report, and the sections that were not available."""

    def __init__(self, fmt: Format) -> None:
        self.fmt = fmt
        self.md = fmt == Format.MARKDOWN
        self.out: list[str] = []
        self.unavailable: list[str] = []

    def heading(self, text: str, source: str | None = None) -> None:
        tag = f" [{source}]" if source else ""
        self.out += ["", f"### {text}{tag}", ""] if self.md else ["", f"{text}{tag}"]

    def line(self, text: str) -> None:
        self.out.append(f"- {text}" if self.md else f"  {text}")

    def grid(self, rows: list[list[Any]], headers: list[str]) -> None:
        if self.md:
            rows = [[str(c).replace("|", "\\|").replace("\n", " ") for c in row] for row in rows]
        width = output_width()
        text = table(rows, headers, self.fmt, width=None if width is None else width - 2)  # indented by two
        if self.md:  # a markdown table needs blank lines around it
            self.out += ["", *text.splitlines(), ""]
        else:
            self.out += ["  " + line for line in text.splitlines()]

    def missing(self, what: str, section: dict[str, Any]) -> bool:
        if section.get("available", True):
            return False
        self.line(f"{what}: not available ({section.get('reason')})")
        self.unavailable.append(what)
        return True


def count(value: int | None, prefix: str = "") -> str:
    return "" if value is None else f"{prefix}{value:,}"


def short(text: str | None, width: int) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def when(value: str | None) -> str:
    return value[:16].replace("T", " ") if value else "never"
