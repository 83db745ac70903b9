"""SQL shipped with nomos-forensics: Nomos migrations, sample data and the tool's named queries."""
