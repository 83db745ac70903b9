"""`sizes` options: the oversized-message limit (as the rule applies it) and the command's settings."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Config
from ..errors import ConfigError

OVERSIZED_RULE = "oversized-message"
DEFAULT_LIMIT_KB = 50.0
DEFAULT_TRUNCATE_AT_KB = 16.0
DEFAULT_TOP = 10
DEFAULT_SEED = 1

@dataclass(frozen=True)
class Limit:
    """The oversized-message limit: more than `kb` KiB of JSON text (octet_length(content::text))."""

    kb: float
    origin: str  # "--limit-kb", "config <path>", "rule default"

    @property
    def bytes(self) -> int:
        return int(self.kb * 1024)


@dataclass(frozen=True)
class SizesOptions:
    limit: Limit = Limit(DEFAULT_LIMIT_KB, "rule default")
    exact: bool = False
    truncate_at_kb: float = DEFAULT_TRUNCATE_AT_KB
    top: int = DEFAULT_TOP
    sample_percent: float | None = None  # None: chosen from the table's size
    seed: int = DEFAULT_SEED

    @property
    def truncate_bytes(self) -> int:
        return int(self.truncate_at_kb * 1024)


def oversized_limit(config: Config, override_kb: float | None = None) -> Limit:
    """The limit the oversized-message rule applies: --limit-kb, else its max_kb option, else its default.

    The rule is found through the plugin registry and built from the config exactly as `review`
    builds it, so both commands call the same message oversized.
    """
    if override_kb is not None:
        return Limit(float(override_kb), "--limit-kb")
    from .. import plugins

    spec = next((s for s in plugins.load().rules if s.name == OVERSIZED_RULE), None)
    options = config.options_for(OVERSIZED_RULE, spec.code if spec else OVERSIZED_RULE)
    where = f"{config.source or 'config'}: rules.{OVERSIZED_RULE}.max_kb"
    try:
        value = spec.cls(options).options["max_kb"] if spec else options.get("max_kb", DEFAULT_LIMIT_KB)
        kb = float(value)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from None
    except TypeError:
        raise ConfigError(f"{where} must be a number of KiB") from None
    if not kb > 0:
        raise ConfigError(f"{where} must be positive")
    return Limit(kb, f"config {config.source}" if "max_kb" in options else "rule default")
