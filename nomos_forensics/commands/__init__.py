"""One module per command; importing this package registers them all on the `cli` group."""

from . import demo, doctor, review, rules, scan, sessions, sizes  # noqa: F401
