"""One module per command. `COMMANDS` maps each command's name to where it lives, so that the
entry point (cli.py) imports only the command it runs: the report's templates, the statistics of
`compare` and the size queries cost every `review` about 65 ms of start-up when imported eagerly."""

COMMANDS = {
    "doctor": ("doctor", "doctor"),
    "sessions": ("sessions", "sessions"),
    "review": ("review", "review"),
    "scan": ("scan", "scan"),
    "compare": ("compare", "compare_command"),
    "merge": ("merge", "merge"),
    "report": ("report", "report"),
    "sizes": ("sizes", "sizes"),
    "rules": ("rules", "rules_command"),
    "demo": ("demo", "demo"),
}
