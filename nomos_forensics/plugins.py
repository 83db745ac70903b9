"""Load rule plugins: installed entry points (built-ins included), local files and modules.

Built-in rules come through the `nomos_forensics` entry-point group exactly like third-party
ones. NOMOS_FORENSICS_LOAD_PLUGINS (comma list of distribution or entry-point names; empty
loads none) restricts the third-party ones; NOMOS_FORENSICS_PLUGINS adds local plugins like
`-p`. A plugin that fails to load is reported by name and the others still load; that
includes one calling sys.exit() (SystemExit), but never Ctrl-C (KeyboardInterrupt).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pluggy

from . import hookspecs
from .errors import reraise_interrupt
from .rule import RULE_NAME, Rule, Severity

ENTRY_POINT_GROUP = "nomos_forensics"
LOAD_PLUGINS_ENV = "NOMOS_FORENSICS_LOAD_PLUGINS"
PLUGINS_ENV = "NOMOS_FORENSICS_PLUGINS"
OWN_DISTRIBUTION = "nomos-forensics"
BUILTIN = "built-in"


@dataclass(frozen=True)
class LoadProblem:
    source: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"rule": self.source, "type": "PluginLoadError", "message": self.message}


@dataclass(frozen=True)
class RuleSpec:
    cls: type[Rule]
    source: str  # "built-in", "dist:<name>", "file:<path>" or "module:<name>"

    @property
    def name(self) -> str:
        return self.cls.name

    @property
    def code(self) -> str:
        return self.cls.code

    @property
    def version(self) -> str:
        """What identifies this rule's code: the distribution's version (built-ins: ours), a
        module's `__version__`, else the SHA-256 of its file. Shards record it: shards whose
        plugins differ do not make one scan."""
        return _version(self.cls, self.source)


@dataclass
class Registry:
    manager: pluggy.PluginManager
    rules: list[RuleSpec] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)


@functools.cache
def _version(cls: type, source: str) -> str:
    if source == BUILTIN:
        return f"{OWN_DISTRIBUTION} {importlib.metadata.version(OWN_DISTRIBUTION)}"
    if source.startswith("dist:"):
        try:
            return f"{source[5:]} {importlib.metadata.version(source[5:])}"
        except importlib.metadata.PackageNotFoundError:
            pass
    module = sys.modules.get(cls.__module__)
    declared = getattr(module, "__version__", None)
    if isinstance(declared, str) and not source.startswith("file:"):
        return declared
    try:
        with open(getattr(module, "__file__", None) or "", "rb") as handle:
            return "sha256:" + hashlib.sha256(handle.read()).hexdigest()[:16]
    except (OSError, TypeError):
        return "unknown"


def _describe_error(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def _allowed(names: Iterable[str | None], allow: set[str] | None) -> bool:
    if allow is None:
        return True
    return any(n and n.lower() in allow for n in names)


def _entry_points():
    return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)


def _load_local(ref: str) -> tuple[ModuleType, str]:
    path = Path(ref).expanduser()
    if ref.endswith(".py") or path.is_file() or os.sep in ref:
        if not path.is_file():
            raise FileNotFoundError(f"no such plugin file: {ref}")
        resolved = path.resolve()
        name = f"nomos_forensics_local_{resolved.stem}_{hashlib.sha1(str(resolved).encode()).hexdigest()[:8]}"
        if name in sys.modules:
            return sys.modules[name], f"file:{ref}"
        spec = importlib.util.spec_from_file_location(name, resolved)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {ref}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        return module, f"file:{ref}"
    if os.getcwd() not in sys.path:  # `-p package.module` finds modules in the working directory
        sys.path.append(os.getcwd())
    return importlib.import_module(ref), f"module:{ref}"


def local_plugin_refs(cli_refs: Sequence[str] = ()) -> list[str]:
    env = [r.strip() for r in os.environ.get(PLUGINS_ENV, "").split(",") if r.strip()]
    refs: list[str] = []
    for ref in [*env, *cli_refs]:
        if ref not in refs:
            refs.append(ref)
    return refs


def load(cli_plugins: Sequence[str] = ()) -> Registry:
    """Build a plugin manager with every allowed plugin registered and collect their rules."""
    with contextlib.redirect_stdout(sys.stderr):  # a plugin printing at import must not land in the output
        return _load(cli_plugins)


def _load(cli_plugins: Sequence[str]) -> Registry:
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    registry = Registry(manager)
    raw_allow = os.environ.get(LOAD_PLUGINS_ENV)
    allow = None if raw_allow is None else {n.strip().lower() for n in raw_allow.split(",") if n.strip()}

    sources: list[tuple[object, str]] = []
    for ep in _entry_points():
        dist = ep.dist.name if ep.dist is not None else None
        builtin = dist is not None and dist.lower().replace("_", "-") == OWN_DISTRIBUTION
        if not builtin and not _allowed((dist, ep.name), allow):
            continue
        try:
            sources.append((ep.load(), BUILTIN if builtin else f"dist:{dist or ep.name}"))
        except BaseException as error:  # a broken plugin must not stop the others
            reraise_interrupt(error)
            registry.problems.append(LoadProblem(ep.name, f"failed to load: {_describe_error(error)}"))

    for ref in local_plugin_refs(cli_plugins):
        try:
            sources.append(_load_local(ref))
        except BaseException as error:
            reraise_interrupt(error)
            registry.problems.append(LoadProblem(ref, f"failed to load: {_describe_error(error)}"))

    source_of: dict[str, str] = {}
    for module, source in sources:
        if manager.is_registered(module):
            continue
        try:
            source_of[manager.register(module) or ""] = source
        except BaseException as error:
            reraise_interrupt(error)
            registry.problems.append(LoadProblem(source, f"failed to register: {_describe_error(error)}"))

    # built-ins first: a plugin rule that reuses a built-in's code or name is the one refused
    callers = plugins_in_call_order(manager, "nomos_forensics_rules")
    for plugin, name in sorted(callers, key=lambda caller: source_of.get(caller[1]) != BUILTIN):
        source = source_of.get(name, name)
        try:
            # through pluggy, one plugin at a time: argument pruning, tryfirst/trylast and
            # wrappers behave as pluggy documents, and one broken plugin cannot hide the rest
            results = isolated_hook(manager, "nomos_forensics_rules", plugin)()
        except BaseException as error:
            reraise_interrupt(error)
            registry.problems.append(LoadProblem(source, f"nomos_forensics_rules raised {_describe_error(error)}"))
            continue
        for provided in results or []:
            try:
                provided = list(provided or [])
            except TypeError:
                registry.problems.append(LoadProblem(
                    source, f"nomos_forensics_rules returned {type(provided).__name__} {provided!r:.40}, not a list of rule classes"))
                continue
            except BaseException as error:  # a generator that raises as it is read
                reraise_interrupt(error)
                registry.problems.append(LoadProblem(source, f"nomos_forensics_rules raised {_describe_error(error)}"))
                continue
            for cls in provided:
                problem = _validate_rule(cls, registry)
                if problem:
                    registry.problems.append(LoadProblem(source, problem))
                else:
                    registry.rules.append(RuleSpec(cls, source))
    registry.rules.sort(key=lambda spec: (spec.source != BUILTIN, spec.code))
    return registry


def plugins_in_call_order(manager: pluggy.PluginManager, hook: str) -> list[tuple[object, str]]:
    """The plugins implementing `hook`, each once, in the order pluggy calls them (tryfirst
    first, trylast last, otherwise the most recently registered first)."""
    seen: list[tuple[object, str]] = []
    for impl in reversed(getattr(manager.hook, hook).get_hookimpls()):
        if all(plugin is not impl.plugin for plugin, _ in seen):
            seen.append((impl.plugin, impl.plugin_name))
    return seen


def isolated_hook(manager: pluggy.PluginManager, hook: str, plugin: object):
    """A pluggy hook caller that calls only `plugin`'s implementations of `hook`."""
    others = [p for p in manager.get_plugins() if p is not plugin]
    return manager.subset_hook_caller(hook, remove_plugins=others)


def _validate_rule(cls: object, registry: Registry) -> str | None:
    if not (isinstance(cls, type) and issubclass(cls, Rule)):
        return f"{cls!r} is not a nomos_forensics.Rule subclass"
    if not cls.code or not cls.name:
        return f"rule {cls.__name__} has no code or name"
    if not isinstance(cls.code, str) or not isinstance(cls.name, str):
        return f"rule {cls.__name__}: code and name must be strings, not {cls.code!r:.20} and {cls.name!r:.20}"
    if not isinstance(cls.requires, Mapping):
        return f"rule {cls.name}: requires must map tables to columns, not {cls.requires!r:.40}"
    if not RULE_NAME.match(cls.name):
        return f"rule name {cls.name!r} is not kebab-case"
    try:
        Severity.parse(cls.severity)
    except ValueError as error:
        return f"rule {cls.name}: {error}"
    for spec in registry.rules:
        if spec.code.lower() == cls.code.lower() or spec.name == cls.name:
            return f"rule {cls.name} ({cls.code}) duplicates {spec.name} ({spec.code}) from {spec.source}"
    return None
