"""One module per command; `COMMANDS` is what the entry point (cli.py) adds to its group."""

from .compare import compare_command
from .demo import demo
from .doctor import doctor
from .merge import merge
from .report import report
from .review import review
from .rules import rules_command
from .scan import scan
from .sessions import sessions
from .sizes import sizes

COMMANDS = [doctor, sessions, review, scan, compare_command, merge, report, sizes, rules_command, demo]
