"""nomos-forensics: find out why Nomos LLM-agent chat sessions fail, from the Nomos database."""

from .hookspecs import hookimpl
from .model import Message, Session, ToolCall, Turn
from .rule import Evidence, Finding, Need, Option, Rule, RuleContext, Severity

__version__ = "0.1.0"

__all__ = [
    "Evidence",
    "Finding",
    "Message",
    "Need",
    "Option",
    "Rule",
    "RuleContext",
    "Session",
    "Severity",
    "ToolCall",
    "Turn",
    "hookimpl",
    "__version__",
]
