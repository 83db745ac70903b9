"""One module per command; `COMMANDS` is what the entry point (cli.py) adds to its group."""

from .demo import demo
from .doctor import doctor
from .report import report
from .review import review
from .rules import rules_command
from .scan import scan
from .sessions import sessions
from .sizes import sizes

COMMANDS = [doctor, sessions, review, scan, report, sizes, rules_command, demo]
