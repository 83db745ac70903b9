"""Mappers of the real corpus's source formats, one module per format (see real_corpus.format_module)."""
