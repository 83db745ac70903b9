"""Text understanding, in one place: prose extraction and statement splitting (`prose`), word
lists and phrase patterns kept as data (`lexicon`), fast matching (`prefilter`), offline
language identification (`language`, over `profile`). Rules reach it through
`nomos_forensics.rulekit`; the modules here are its implementation.
"""
