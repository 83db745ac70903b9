"""Built-in nomos-forensics rules, one module per failure signature (shipped as `nomos_forensics_rules`).

They register through the `nomos_forensics` entry-point group, exactly like third-party plugins.
"""
