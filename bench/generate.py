#!/usr/bin/env python3
"""Build a realistic synthetic Nomos database for benchmarking nomos-forensics.

    python bench/generate.py --dsn postgresql://postgres@127.0.0.1:5432/postgres \\
        --dbname nomos_forensics_bench --messages 1000000 --sessions 35000 [--seed 42] [--scale 2.0]

`--dsn` is an admin connection to the server; the database `--dbname` (which must start with
`nomos_forensics`) is dropped, created, migrated with `devdb.apply_migrations` and loaded with
COPY. The content follows ../shared/reference/nomos-data-model.md: sessions of varying length
interleaved in time, every content shape real rows have, a few percent of sessions with each
failure signature of the runbook, near misses that must not fire, tool outputs mostly small with
a long tail to megabytes, and audit / plan / execution rows.

Ground truth goes to a `bench` schema in the new database (`bench.meta`, `bench.labels`: which
session and message carries which signature or near miss) and to a JSON file (default
bench/out/meta.json for the default database name, bench/out/meta-<dbname>.json otherwise).
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import os
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg
import psycopg.conninfo
from psycopg import sql

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import textpools as tp  # noqa: E402

from nomos_forensics import devdb  # noqa: E402

DEFAULT_DBNAME = "nomos_forensics_bench"
SIGNATURES = ("cant-run", "no-web-tool", "empty-response", "non-english-refusal", "tool-fanout",
              "oversized-message")
# share of sessions carrying each signature (flash-tier models get more of some, see WEIGHTS)
RATES = {"cant-run": 0.030, "no-web-tool": 0.025, "empty-response": 0.030,
         "non-english-refusal": 0.025, "tool-fanout": 0.020, "oversized-message": 0.034}
# near misses: look like a signature, must not be reported as one
NEAR_RATES = {"near:can-run-later": 0.010, "near:user-cant-run": 0.008,
              "near:no-web-with-fetch": 0.008, "near:fanout-30": 0.004,
              "near:fanout-spread": 0.003, "near:foreign-user": 0.020}
FLASH_WEIGHT = {"cant-run": 2.0, "empty-response": 3.0, "non-english-refusal": 3.0,
                "tool-fanout": 1.5}

DAY = 86400.0
T_END = 1783620000.0              # 2026-07-09 18:00 UTC
T_START = T_END - 180 * DAY
LEGACY_END = T_START + 25 * DAY   # older rows: tool results inside assistant messages
AUDIT_START = T_START + 40 * DAY  # audit_log exists from here on
RELEASE = T_END - 30 * DAY        # request_execution retired, plan generations, replaced steps

OVERSIZE_MIN = 60_000             # bytes of an oversized tool output (escaped JSON, ~ logical)
OVERSIZE_ALPHA = 0.92             # Pareto tail of oversized outputs
OVERSIZE_CAP = 4_200_000
# what a labelled fan-out turn runs on every container (chosen without a draw: the stream stays the same)
LOOP_COMMANDS = ("systemctl is-active nginx", "df -h /", "apt list --upgradable", "cat /etc/debian_version")
NORMAL_CAP = 46_000               # ordinary outputs stay below the 50 KB signature
LONG_SESSION = 5000

PH = "@@OUT@@"                    # placeholder for a pre-escaped pool slice inside a JSON text
QPH = json.dumps(PH)


def esc_json(obj) -> str:
    return json.dumps(obj, ensure_ascii=False)


def copy_text(value) -> str:
    """A value as a COPY text-format field."""
    if value is None:
        return "\\N"
    s = str(value)
    if "\\" in s or "\t" in s or "\n" in s or "\r" in s:
        s = s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return s


def ts(t: float) -> str:
    tm = time.gmtime(t)
    return "%04d-%02d-%02d %02d:%02d:%02d.%06d+00" % (
        tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int((t % 1) * 1e6))


def finish(text: str, slice_: str | None) -> str:
    """Unescaped JSON text (maybe with the placeholder) -> COPY field."""
    out = text.replace("\\", "\\\\")
    if slice_ is not None:
        out = out.replace(QPH, '"' + slice_ + '"', 1)
    return out


def weighted_sample(r: random.Random, items: list, weights: list[float], k: int) -> list:
    """k items without replacement, probability proportional to weight (Efraimidis-Spirakis)."""
    if k <= 0 or not items:
        return []
    keys = [(-math.log(1.0 - r.random()) / w, i) for i, w in enumerate(weights) if w > 0]
    keys.sort()
    return [items[i] for _, i in keys[:k]]


# ============================================================================================
# sessions


class Spec:
    __slots__ = ("idx", "id", "start", "model", "lang", "legacy", "web", "audit", "retired",
                 "length", "fixed", "sigs", "specials", "prelude", "seed", "title", "first_t",
                 "last_t", "status", "goal")

    def __init__(self, idx: int, r: random.Random, start: float) -> None:
        self.idx = idx
        self.id = str(uuid.UUID(int=r.getrandbits(128), version=4))
        self.start = start
        models, weights = zip(*tp.MODELS)
        self.model = r.choices(models, weights)[0]
        self.lang = "en"
        self.legacy = start < LEGACY_END
        self.web = r.random() < (0.25 if start < RELEASE else 0.55)
        self.audit = start >= AUDIT_START and r.random() < 0.7
        self.retired = r.random() < (0.02 if start < RELEASE else 0.002)
        self.length = 0
        self.fixed = False
        self.sigs: set[str] = set()
        self.specials: list[tuple[str, int, int]] = []  # (kind, size, n_calls)
        self.prelude = (not self.legacy) and r.random() < 0.12
        self.seed = r.getrandbits(64)
        self.title = self.goal = self.status = None
        self.first_t = self.last_t = start

    def min_length(self) -> int:
        return max(2, int(self.prelude) + sum(size for _, size, _ in self.specials))


def plan_specials(spec: Spec, r: random.Random) -> None:
    """Decide the special turns (signatures and near misses) and their sizes."""
    sp = spec.specials
    for kind in sorted(spec.sigs):
        if kind == "cant-run":
            sp.append((kind, r.choice([2, 2, 2, 4]) if not spec.legacy else 2, 0))
        elif kind in ("no-web-tool", "near:can-run-later"):
            sp.append((kind, 2, 0))
        elif kind == "near:user-cant-run":
            sp.append((kind, 3 if spec.legacy else 4, 0))
        elif kind == "near:no-web-with-fetch":
            sp.append((kind, 3 if spec.legacy else 4, 0))
        elif kind in ("empty-response", "non-english-refusal"):
            sp.append((kind, r.choice([2, 2, 4]) if not spec.legacy else r.choice([2, 3]), 0))
        elif kind == "tool-fanout":
            n = min(220, 31 + int(r.expovariate(1 / 22)))
            sp.append((kind, n + 3, n) if r.random() < 0.4 else (kind, 2 * n + 2, -n))
        elif kind == "near:fanout-30":
            sp.append((kind, 33, 30) if r.random() < 0.5 else (kind, 62, -30))
        elif kind == "near:fanout-spread":
            sp.extend([(kind, 33, 30)] * 3)
        elif kind == "oversized-message":
            k = r.choices([1, 2, 3, 4, 6], [55, 25, 10, 6, 4])[0]
            for _ in range(k):
                sp.append((kind, 3 if spec.legacy else r.choice([4, 4, 6]), 0))


def build_specs(args, r: random.Random) -> tuple[list[Spec], Spec]:
    n_sessions, n_messages = args.sessions, args.messages
    starts = sorted(r.uniform(T_START, T_END - 2 * DAY) for _ in range(n_sessions))
    specs = [Spec(i, r, t) for i, t in enumerate(starts)]

    long_len = args.long_session or (LONG_SESSION if n_messages >= 50_000 else max(40, n_messages // 10))
    long_spec = specs[int(n_sessions * 0.62)]
    long_spec.legacy = False
    long_spec.length, long_spec.fixed = long_len, True
    long_spec.sigs |= {"tool-fanout", "oversized-message"}
    # a few more sessions with thousands of messages (marathon sessions)
    n_big = round(n_sessions * 0.0003) if n_messages >= 200_000 else 0
    for s in r.sample([s for s in specs if s is not long_spec and not s.legacy], n_big):
        s.length, s.fixed = r.randint(1000, 4000), True

    # non-English users (answered in their language: a near miss for non-english-refusal)
    n_foreign = max(1, round(n_sessions * NEAR_RATES["near:foreign-user"]))
    for s in r.sample([s for s in specs if s is not long_spec], n_foreign):
        s.lang = r.choice(sorted(tp.LOCAL_LANG))
        s.sigs.add("near:foreign-user")

    def flash(s: Spec, sig: str) -> float:
        return FLASH_WEIGHT.get(sig, 1.0) if s.model in tp.FLASH_TIER else 1.0

    for sig in SIGNATURES:
        k = max(1, round(n_sessions * RATES[sig]))
        # sessions of non-English users stay clean: any English reply there would be a finding
        pool = [s for s in specs if s is not long_spec and s.lang == "en"]
        if sig == "tool-fanout":
            pool = [s for s in pool if not s.legacy]
        for s in weighted_sample(r, pool, [flash(s, sig) for s in pool], k):
            s.sigs.add(sig)
    for near in ("near:can-run-later", "near:user-cant-run", "near:no-web-with-fetch",
                 "near:fanout-30", "near:fanout-spread"):
        k = max(1, round(n_sessions * NEAR_RATES[near]))
        pool = [s for s in specs if s is not long_spec and s.lang == "en"]
        if near == "near:no-web-with-fetch":
            pool = [s for s in pool if "no-web-tool" not in s.sigs]
        if near.startswith("near:fanout"):
            pool = [s for s in pool if not s.legacy and "tool-fanout" not in s.sigs]
        for s in r.sample(pool, min(k, len(pool))):
            s.sigs.add(near)
    for s in specs:
        if "no-web-tool" in s.sigs:
            s.web = False
        if "near:no-web-with-fetch" in s.sigs:
            s.web = True
        plan_specials(s, r)

    # lengths: lognormal body (median ~18; most 5-60), scaled to hit --messages exactly
    free = [s for s in specs if not s.fixed]
    fixed_total = sum(s.length for s in specs if s.fixed)
    raw = [min(600.0, max(2.0, r.lognormvariate(math.log(18), 0.8))) for _ in free]
    target = n_messages - fixed_total
    mins = [s.min_length() for s in free]
    if sum(mins) > target:
        raise SystemExit(f"--messages {n_messages} is too small for {n_sessions} sessions "
                         f"(the signatures alone need {sum(mins) + fixed_total})")
    # iterate the scale factor: sessions pinned at their minimum do not scale
    factor = target / sum(raw)
    for _ in range(8):
        lengths = [max(m, round(x * factor)) for x, m in zip(raw, mins)]
        total = sum(lengths)
        if total == target:
            break
        factor *= target / total
    diff = target - sum(lengths)
    while diff != 0:
        i = r.randrange(len(free))
        if diff > 0:
            lengths[i] += 1
            diff -= 1
        elif lengths[i] > mins[i]:
            lengths[i] -= 1
            diff += 1
    for s, n in zip(free, lengths):
        s.length = n
    if long_spec.min_length() > long_spec.length:
        raise SystemExit("long session too short for its signatures")
    for s in specs:
        if s.fixed and s.min_length() > s.length:
            s.specials = []
    return specs, long_spec


# ============================================================================================
# auxiliary tables, spooled to temp files and loaded after the messages


class Aux:
    TABLES = {
        "audit_log": "id, session_id, actor, action, target, risk_class, outcome, detail, created_at",
        "nomos_plans": "id, session_id, goal, status, created_at",
        "nomos_plan_steps": "id, plan_id, seq, generation, title, tool, args, risk_class, status, created_at, updated_at",
        "nomos_plan_executions": "id, session_id, plan_id, step_id, tool, command, status, requested_at, decided_at, started_at, finished_at, error",
    }

    def __init__(self) -> None:
        self.files = {t: tempfile.TemporaryFile("w+", encoding="utf-8") for t in self.TABLES}
        self.ids = {t: 0 for t in self.TABLES}
        self.counts = {t: 0 for t in self.TABLES}

    def row(self, table: str, *values) -> int:
        if table != "nomos_plans":
            self.ids[table] += 1
            values = (self.ids[table],) + values
        self.counts[table] += 1
        self.files[table].write("\t".join(copy_text(v) for v in values) + "\n")
        return self.ids[table]

    def audit(self, session_id, actor, action, target, risk, outcome, detail, t) -> None:
        self.row("audit_log", session_id, actor, action, target, risk, outcome,
                 esc_json(detail) if detail is not None else None, ts(t))

    def load(self, conn: psycopg.Connection) -> None:
        with conn.cursor() as cur:
            for table, cols in self.TABLES.items():
                f = self.files[table]
                f.seek(0)
                with cur.copy(f"COPY {table} ({cols}) FROM STDIN") as cp:
                    while chunk := f.read(4 << 20):
                        cp.write(chunk)
                f.close()
            for table in ("audit_log", "nomos_plan_steps", "nomos_plan_executions"):
                cur.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                            f"greatest((SELECT max(id) FROM {table}), 1))")


def risk_of(command: str) -> str:
    if any(w in command for w in ("rm ", "-delete", "prune", "dist-upgrade", "destroy", "drop")):
        return "destructive" if "rm " in command or "destroy" in command else "reversible_high"
    if any(w in command for w in ("restart", "reload", "renew", "upgrade", "resize", "migrate")):
        return "reversible_low"
    return "read_only"


# ============================================================================================
# one session's messages


class SessionGen:
    """Generates one session's messages lazily: (time, role, COPY-escaped content, label)."""

    def __init__(self, spec: Spec, pools: tp.LogPools, lxc_outputs: list[str], aux: Aux,
                 stats: dict) -> None:
        self.s = spec
        self.r = random.Random(spec.seed)
        self.pools = pools
        self.lxc = lxc_outputs
        self.aux = aux
        self.stats = stats
        self.t = spec.start
        self.ncall = 0
        self.generation = 0
        self.plans: list[tuple[str, list[list]]] = []  # (plan_id, steps rows) flushed at the end
        self.followup: str | None = None
        self.vmids = [r for r in range(100, 200)]
        self.cap = NORMAL_CAP
        self.clean = False  # canonical call shapes only (labelled fan-out turns stay unambiguous)
        self.loop: str | None = None  # a fan-out turn's command: one call shape over many containers

    # -- helpers ---------------------------------------------------------------------------
    def tick(self, role: str) -> float:
        r = self.r
        if role == "user":
            gap = r.lognormvariate(math.log(45), 1.1)
            if self.s.length > 800 and r.random() < 0.01:
                gap += r.uniform(3600, 12 * 3600)  # marathon sessions pause for hours
        elif role == "tool":
            gap = r.lognormvariate(math.log(1.5), 1.2)
        else:
            gap = r.lognormvariate(math.log(4), 0.8)
        self.t += min(gap, 6 * 3600) + 0.001
        return self.t

    def fill(self, template: str) -> str:
        return tp.fill(template, self.r)

    def mess(self, obj: dict, text: str | None, role: str) -> str:
        """Apply the messy shapes real rows have to a user/assistant/system content object."""
        r = self.r
        x = r.random()
        st = self.stats
        # (each shape is forced once at the start, so even a tiny database has all of them)
        if x < 0.006 or not st["double_encoded"]:
            st["double_encoded"] += 1
            return esc_json(esc_json(obj))
        if text and role in ("user", "assistant") and (x < 0.010 or not st["bare_string"]):
            st["bare_string"] += 1
            return esc_json(text)
        if text and role in ("user", "assistant") and (x < 0.013 or not st["array"]):
            st["array"] += 1
            return esc_json([{"type": "text", "text": text}])
        if text and role == "user" and (x < 0.016 or not st["content_key"]):
            st["content_key"] += 1
            return esc_json({"content": text})
        return esc_json(obj)

    def msg(self, role: str, content_json: str, label: str | None = None, slice_: str | None = None):
        return (self.tick(role), role, finish(content_json, slice_), label)

    def user_text(self, kind: str = "normal") -> str:
        r = self.r
        if self.followup and kind == "normal":
            text, self.followup = self.followup, None
            return text
        if self.s.lang != "en":
            prompts, _ = tp.LOCAL_LANG[self.s.lang]
            return self.fill(r.choice(prompts))
        if kind == "normal" and r.random() < 0.35 and self.s.title is not None:
            return self.fill(r.choice(tp.USER_FOLLOWUPS))
        return self.fill(r.choice(tp.USER_PROMPTS))

    def user(self, kind: str = "normal", text: str | None = None):
        text = text if text is not None else self.user_text(kind)
        if self.s.title is None:
            self.s.title = text
            if self.s.lang != "en":
                return self.msg("user", esc_json({"text": text}), "near:foreign-user")
        return self.msg("user", self.mess({"text": text}, text, "user"))

    def final_text(self) -> str:
        if self.s.lang != "en":
            _, replies = tp.LOCAL_LANG[self.s.lang]
            return self.fill(self.r.choice(replies))
        return self.fill(self.r.choice(tp.ASSISTANT_FINAL))

    def assistant_text(self, text: str, label: str | None = None, extra: dict | None = None):
        obj = {"text": text, "finish_reason": "stop"}
        if extra:
            obj.update(extra)
        if label is None:
            content = self.mess(obj, text, "assistant")
        else:
            content = esc_json(obj)
        return self.msg("assistant", content, label)

    # -- tool calls --------------------------------------------------------------------------
    def pick_tool(self, exclude_web: bool = False) -> str:
        r = self.r
        x = r.random()
        if self.s.retired and x < 0.08:
            return "request_execution"
        if x < 0.64:
            return "run"
        if x < 0.77:
            return "list_lxcs"
        if x < 0.85:
            return "upsert_knowledge"
        if x < 0.90 and self.generation < 3:
            return "propose_plan"
        if self.s.web and not exclude_web:
            return "http_get"
        return "run"

    def call_args(self, tool: str, big_kind: str | None = None) -> dict:
        args = self._call_args(tool, big_kind)
        if self.loop is not None:  # N+1: the same call per container (drawn as above: the stream stays the same)
            vmid = (args.get("target") or "lxc/100").split("/")[-1] if tool in ("run", "request_execution") else None
            vmid = vmid if vmid and vmid.isdigit() else str(self.ncall % 900 + 100)
            return {"run": {"target": f"lxc/{vmid}", "command": self.loop},
                    "request_execution": {"target": f"lxc/{vmid}", "command": self.loop},
                    "list_lxcs": {"vmid": int(vmid)},
                    "upsert_knowledge": {"about": [f"lxc/{vmid}"], "content": f"lxc/{vmid}: checked"},
                    "http_get": {"url": f"https://pve.example/api2/json/nodes/pve1/lxc/{vmid}/status/current"},
                    }.get(tool, args)
        return args

    def _call_args(self, tool: str, big_kind: str | None = None) -> dict:
        r = self.r
        vmid = r.choice(self.vmids)
        if tool in ("run", "request_execution"):
            if big_kind:
                cmd = self.fill(big_kind)
            else:
                cmd = self.fill(r.choice(tp.COMMANDS_SMALL))
            target = f"lxc/{vmid}" if r.random() < 0.8 else r.choice(tp.NODES)
            return {"target": target, "command": cmd} if r.random() < 0.9 else {"target": target, "command": cmd, "timeout": 120}
        if tool == "list_lxcs":
            return r.choice([{}, {"state": "active"}, {"state": "active"}, {"state": "destroyed"}, {"node": r.choice(tp.NODES)}])
        if tool == "upsert_knowledge":
            topic = r.choice(tp.KB_TOPICS)
            about = [f"lxc/{vmid}", topic] if r.random() < 0.6 else topic
            return {"about": about, "content": self.fill("{ct} ({target}) runs {svc}; last checked {hh}:{mm}, disk {pct2}% used.")}
        if tool == "propose_plan":
            steps = []
            for i in range(r.randint(2, 6)):
                cmd = self.fill(r.choice(tp.COMMANDS_SMALL))
                steps.append({"title": f"Step {i + 1}: {cmd.split()[0]}", "tool": "run",
                              "args": {"target": f"lxc/{vmid}", "command": cmd}, "risk_class": risk_of(cmd)})
            return {"goal": (self.s.goal if self.s.goal != "pending" else None) or self.fill(r.choice(tp.USER_PROMPTS)), "steps": steps}
        if tool == "complete_task":
            return {"summary": self.fill(r.choice(tp.ASSISTANT_FINAL))[:200], "outcome": r.choice(["success", "success", "partial"])}
        if tool == "http_get":
            return {"url": r.choice(["https://pve.proxmox.com/wiki/Roadmap", "https://www.postgresql.org/docs/release/17.2/",
                                     "https://doc.traefik.io/traefik/middlewares/http/ratelimit/",
                                     "https://security-tracker.debian.org/tracker/", "https://github.com/k3s-io/k3s/releases",
                                     f"https://openzfs.github.io/openzfs-docs/Performance%20and%20Tuning/{r.randint(1, 99)}"])}
        return {}

    def output(self, tool: str, args: dict, size: int | None = None, big_kind: str | None = None):
        """(output JSON value text possibly with placeholder, slice or None, is_error)."""
        r = self.r
        if tool == "request_execution":
            return esc_json({"execution_id": r.randint(1, 10**6), "status": "pending_approval"}), None, False
        if tool == "run":
            is_error = r.random() < 0.04
            if size is None:
                size = int(r.lognormvariate(math.log(260), 1.35))
                if size > self.cap:
                    size = r.randint(self.cap // 2, self.cap)
            kind = big_kind or r.choice(("syslog", "journal", "ps", "apt", "docker", "dmesg", "nginx",
                                         "kubectl", "find", "git", "metrics"))
            if size < 40 and not is_error:
                return esc_json(r.choice(["active", "ok", "", "running", "Done.", "0"])), None, False
            sl = self.pools.slice(r, kind, size)
            if r.random() < 0.6:
                return QPH, sl, is_error
            return esc_json({"stdout": PH, "stderr": "exit status 1" if is_error else "",
                             "exit_code": 1 if is_error else 0, "duration_ms": r.randint(5, 90000)}), sl, is_error
        if tool == "list_lxcs":
            return "@@LXC@@" + r.choice(self.lxc), None, False
        if tool == "http_get":
            if size is None:
                size = min(self.cap, int(r.lognormvariate(math.log(3500), 1.0)))
            sl = self.pools.slice(r, "html", size)
            return esc_json({"status": 200, "url": args.get("url"), "content_type": "text/html", "body": PH}), sl, False
        if tool == "propose_plan":
            return esc_json({"plan_id": self.record_plan(args), "status": "proposed", "generation": self.generation,
                             "steps": len(args.get("steps", []))}), None, False
        if tool == "complete_task":
            return esc_json({"status": "completed", "cancelled_approvals": r.choice([0, 0, 0, 1, 2]),
                             "writeback": r.choice(["ok", "ok", "missing"])}), None, False
        if tool == "upsert_knowledge":
            return esc_json({"ok": True, "id": f"kb_{r.getrandbits(40):010x}"}), None, False
        return esc_json({"ok": True}), None, False

    def call_obj(self, tool: str, args: dict, call_id: str) -> dict:
        r = self.r
        st = self.stats
        legacy = self.s.legacy
        x = r.random()
        if self.clean:
            return {"id": call_id, "name": tool, "arguments": args}
        if x < (0.30 if legacy else 0.01) or not st["openai_function_call"]:
            st["openai_function_call"] += 1
            return {"id": call_id, "type": "function", "function": {"name": tool, "arguments": esc_json(args)}}
        if x < (0.32 if legacy else 0.016) or not st["nameless_call"]:
            st["nameless_call"] += 1
            return {"id": call_id, "arguments": args}
        if r.random() < (0.6 if legacy else 0.03) or not st["arguments_string"]:
            st["arguments_string"] += 1
            return {"id": call_id, "name": tool, "arguments": esc_json(args)}
        return {"id": call_id, "name": tool, "arguments": args}

    def cycle(self, tools: list[str], label: str | None = None, big: tuple[int, str] | None = None,
              text: str | None = None, size: int | None = None):
        """An assistant message calling `tools`, then the results (tool rows, or inline if legacy)."""
        r = self.r
        s = self.s
        calls, results = [], []
        self.cap = NORMAL_CAP // len(tools) if s.legacy else NORMAL_CAP
        for i, tool in enumerate(tools):
            self.ncall += 1
            call_id = f"call_{self.ncall}" if r.random() < 0.5 else f"call_{r.getrandbits(64):016x}"
            big_cmd = big[1] if (big and i == 0) else None
            args = self.call_args(tool, big_cmd)
            out, sl, is_error = self.output(tool, args, big[0] if (big and i == 0) else size,
                                            big[2] if (big and i == 0) else None)
            calls.append(self.call_obj(tool, args, call_id))
            results.append((call_id, tool, out, sl, is_error, args))
        if text is None and s.lang != "en":
            text_val = r.choice(["", None, Ellipsis])
        elif text is None:
            x = r.random()
            text_val = "" if x < 0.4 else (None if x < 0.5 else (Ellipsis if x < 0.6 else self.fill(r.choice(tp.ASSISTANT_INTERIM))))
        else:
            text_val = text
        obj: dict = {}
        if text_val is not Ellipsis:
            obj["text"] = text_val
        obj["tool_calls"] = calls
        obj["finish_reason"] = "tool_calls"
        if self.clean:
            pass
        elif r.random() < 0.002 or not self.stats["tool_calls_string"]:
            self.stats["tool_calls_string"] += 1
            obj["tool_calls"] = esc_json(calls)
        elif len(calls) == 1 and (r.random() < 0.002 or not self.stats["tool_calls_object"]):
            self.stats["tool_calls_object"] += 1
            obj["tool_calls"] = calls[0]
        if s.legacy:
            # one assistant message with tool_results inline
            parts, slices = [], []
            for call_id, tool, out, sl, is_error, _ in results:
                out_json = self.resolve_lxc(out)
                parts.append('{"tool_call_id": %s, "name": %s, "output": %s, "is_error": %s}' % (
                    esc_json(call_id), esc_json(tool), out_json, "true" if is_error else "false"))
                slices.append(sl)
            self.stats["legacy_tool_results"] += 1
            body = esc_json(obj)[:-1] + ', "tool_results": [' + ", ".join(parts) + "]}"
            yield self.msg_multi("assistant", body, slices, label)
            self.audit_calls(results)
            return
        yield self.msg("assistant", esc_json(obj), label)
        for call_id, tool, out, sl, is_error, _args in results:
            out_json = self.resolve_lxc(out)
            x = r.random()
            if not big and (x < 0.002 or not self.stats["null_content"]):
                self.stats["null_content"] += 1
                yield self.msg("tool", "null")
                continue
            text = '{"tool_call_id": %s, "name": %s, "output": %s, "is_error": %s}' % (
                esc_json(call_id), esc_json(tool), out_json, "true" if is_error else "false")
            if sl is None and x < 0.007 and not big:
                self.stats["double_encoded"] += 1
                text = esc_json(text)
            lab = "oversized-message" if (big and sl is not None and len(sl) >= OVERSIZE_MIN and call_id == results[0][0]) else None
            yield self.msg("tool", text, lab, sl)
        self.audit_calls(results)

    def resolve_lxc(self, out: str) -> str:
        return out[7:] if out.startswith("@@LXC@@") else out

    def msg_multi(self, role: str, text: str, slices: list, label: str | None):
        out = text.replace("\\", "\\\\")
        for sl in slices:
            if sl is not None:
                out = out.replace(QPH, '"' + sl + '"', 1)
        if label is None and any(sl is not None and len(sl) >= OVERSIZE_MIN for sl in slices):
            label = "oversized-message"
        return (self.tick(role), role, out, label)

    def audit_calls(self, results) -> None:
        s, r, aux = self.s, self.r, self.aux
        for call_id, tool, _out, _sl, is_error, args in results:
            if tool in ("run", "request_execution"):
                cmd = args.get("command", "")
                if s.audit:
                    outcome = "error" if is_error else r.choices(["allowed", "blocked", "denied"], [93, 4, 3])[0]
                    aux.audit(s.id, "agent", tool, args.get("target"), risk_of(cmd), outcome,
                              {"command": cmd, "call_id": call_id}, self.t)
                if r.random() < (1.0 if tool == "request_execution" else 0.4):
                    status = ("pending_approval" if tool == "request_execution" and r.random() < 0.5
                              else ("failed" if is_error else "succeeded"))
                    done = status in ("succeeded", "failed")
                    aux.row("nomos_plan_executions", s.id, None, None, tool, cmd, status, ts(self.t - 1),
                            ts(self.t - 0.5) if done else None, ts(self.t - 0.4) if done else None,
                            ts(self.t) if done else None, "exit status 1" if status == "failed" else None)
            elif s.audit and tool in ("propose_plan", "complete_task", "upsert_knowledge"):
                aux.audit(s.id, "agent", tool, None, "read_only" if tool != "propose_plan" else "reversible_low",
                          "allowed", None if r.random() < 0.5 else {"call_id": call_id}, self.t)

    def record_plan(self, args: dict) -> str:
        r, s = self.r, self.s
        self.generation += 1
        plan_id = str(uuid.UUID(int=r.getrandbits(128), version=4))
        after_release = s.start >= RELEASE
        # a new proposal replaces the previous generation's pending steps (since the release)
        for _pid, steps in self.plans:
            for row in steps:
                if row[7] == "pending" and (after_release or r.random() < 0.1):
                    row[7] = "replaced"
        steps = []
        for seq, st in enumerate(args.get("steps", []), 1):
            steps.append([plan_id, seq, self.generation if after_release else 1, st["title"], st["tool"],
                          esc_json(st["args"]), st["risk_class"], "pending", ts(self.t), None])
        self.plans.append((plan_id, steps))
        return plan_id

    def flush_plans(self) -> None:
        r, s, aux = self.r, self.s, self.aux
        for n, (plan_id, steps) in enumerate(self.plans):
            latest = n == len(self.plans) - 1
            if not latest:
                status = "replaced"
            else:
                status = r.choices(["proposed", "approved", "executing", "completed", "cancelled"], [15, 15, 5, 55, 10])[0]
            aux.row("nomos_plans", plan_id, s.id, s.goal, status, steps[0][8] if steps else ts(self.t))
            if s.audit and status in ("approved", "executing", "completed"):
                aux.audit(s.id, f"user:{r.choice(tp.USERS)}", "approve", None, "reversible_low", "approved",
                          {"plan_id": plan_id}, s.last_t)
            for i, row in enumerate(steps):
                if latest:
                    if status == "completed":
                        row[7] = r.choices(["done", "skipped", "failed"], [90, 6, 4])[0]
                    elif status in ("approved", "executing"):
                        row[7] = "done" if i == 0 else ("running" if i == 1 and status == "executing" else "approved")
                    elif status == "cancelled":
                        row[7] = "cancelled"
                    row[9] = ts(s.last_t)
                step_id = aux.row("nomos_plan_steps", *row)
                if row[7] in ("done", "failed", "running"):
                    ex_status = {"done": "succeeded", "failed": "failed", "running": "running"}[row[7]]
                    aux.row("nomos_plan_executions", s.id, plan_id, step_id, "run",
                            json.loads(row[5]).get("command"), ex_status, row[8], row[8], row[8],
                            row[9] if ex_status != "running" else None,
                            "exit status 1" if ex_status == "failed" else None)
                elif latest and row[7] == "approved" and r.random() < 0.3:
                    # an approval left waiting (complete_task is supposed to cancel these)
                    aux.row("nomos_plan_executions", s.id, plan_id, step_id, "run",
                            json.loads(row[5]).get("command"), "pending_approval", row[8], None, None, None, None)

    # -- turns -------------------------------------------------------------------------------
    def body_cycles(self, b: int, last_turn: bool, exclude_web: bool = False):
        """Tool cycles filling exactly b messages."""
        r = self.r
        while b > 0:
            if self.s.legacy:
                m = r.choices([1, 2, 3], [75, 18, 7])[0]
                b -= 1
                yield from self.cycle([self.pick_tool(exclude_web) for _ in range(m)])
                continue
            if b == 1:
                interim = self.final_text() if self.s.lang != "en" else self.fill(r.choice(tp.ASSISTANT_INTERIM))
                yield self.assistant_text(interim)
                b -= 1
                continue
            m = r.choices([1, 2, 3, 4, 6, 8], [70, 16, 7, 4, 2, 1])[0]
            m = min(m, b - 1)
            if b - (1 + m) == 1:
                m = m - 1 if m > 1 else m + 1
            b -= 1 + m
            if last_turn and b == 0 and r.random() < 0.6:
                tools = ["complete_task"] if m == 1 else [self.pick_tool(exclude_web) for _ in range(m - 1)] + ["complete_task"]
            else:
                tools = [self.pick_tool(exclude_web) for _ in range(m)]
            yield from self.cycle(tools)

    def normal_turn(self, size: int, last: bool):
        yield self.user()
        if size == 1:
            return
        yield from self.body_cycles(size - 2, last)
        yield self.assistant_text(self.final_text())

    def special_turn(self, kind: str, size: int, n: int, last: bool):
        r = self.r
        s = self.s
        if kind == "cant-run":
            yield self.user()
            yield from self.body_cycles(size - 2, False)
            yield self.assistant_text(self.fill(r.choice(tp.CANT_RUN)), label=kind)
            self.followup = r.choice(["You do have the run tool. Just run it.", "What? You can run commands, use `run`.",
                                      "You ran commands yesterday. Try again.", "Please use the run tool on the target."])
        elif kind == "near:can-run-later":
            yield self.user()
            yield self.assistant_text(self.fill(r.choice(tp.ASSISTANT_NEAR_MISS_CAN_RUN)), label=kind)
        elif kind == "near:user-cant-run":
            text = self.fill(r.choice(tp.USER_CANT_RUN_NEAR_MISS))
            if s.title is None:
                s.title = text
            yield self.msg("user", esc_json({"text": text}), kind)
            yield from self.body_cycles(size - 2, False)
            yield self.assistant_text(self.final_text())
        elif kind == "no-web-tool":
            yield self.user(text=self.fill(r.choice(tp.USER_NO_WEB_QUESTIONS)))
            yield self.assistant_text(self.fill(r.choice(tp.NO_WEB)), label=kind)
        elif kind == "near:no-web-with-fetch":
            yield self.user(text=self.fill(r.choice(tp.USER_NO_WEB_QUESTIONS)))
            yield from self.cycle(["http_get"], label=kind, text=r.choice(tp.ASSISTANT_NO_WEB_WITH_FETCH))
            yield self.assistant_text(self.fill("According to the fetched page, version {ver} is current; the main change is a fix for {svc}."))
        elif kind == "empty-response":
            yield self.user()
            yield from self.body_cycles(size - 2, False)
            yield self.msg("assistant", r.choice(tp.EMPTY_CONTENTS), kind)
            self.followup = r.choice(["?", "Hello? You returned an empty message.", "You there?", "No answer?",
                                      "The reply is blank, try again."])
        elif kind == "non-english-refusal":
            yield self.user()
            yield from self.body_cycles(size - 2, False)
            langs, weights = zip(*tp.FOREIGN_WEIGHTS.items())
            lang = r.choices(langs, weights)[0]
            yield self.assistant_text(r.choice(tp.FOREIGN_REPLIES[lang]), label=kind)
        elif kind in ("tool-fanout", "near:fanout-30", "near:fanout-spread"):
            yield self.user(text=self.fill(r.choice([
                "Check the status of every container and tell me which ones are unhealthy.",
                "Make sure every active container has unattended-upgrades enabled.",
                "Record the current disk usage of each container in the knowledge base.",
                "Which containers still run Debian 11? Check all of them.",
                "Find every container where {svc} is installed."])))
            main = r.choice(["run", "run", "run", "list_lxcs", "upsert_knowledge"] + (["http_get"] if s.web else []))
            count = abs(n)
            # the main tool alone exceeds 30 calls; beyond that a few other calls may mix in
            tools = [main if (i < 31 or r.random() < 0.9 or kind != "tool-fanout") else r.choice(["run", "list_lxcs"])
                     for i in range(count)]
            label = kind
            self.clean = True
            if kind == "tool-fanout":  # a loop over containers; the near misses stay varied calls
                self.loop = LOOP_COMMANDS[self.ncall % len(LOOP_COMMANDS)]
            if n > 0:   # one assistant message with all calls
                yield from self.cycle(tools, label=label, text=r.choice(["", "Checking all containers."]),
                                      size=r.randint(20, 300))
            else:       # one call per assistant message
                for i, tool in enumerate(tools):
                    yield from self.cycle([tool], label=label if i == 0 else None, size=r.randint(20, 300))
            self.clean, self.loop = False, None
            yield self.assistant_text(self.fill("Checked {n} containers; {k} need attention: {ct} and web-02."))
        elif kind == "oversized-message":
            size_b = min(OVERSIZE_CAP, int(OVERSIZE_MIN / (1.0 - r.random()) ** (1 / OVERSIZE_ALPHA)))
            x = r.random()
            if x < 0.10 and s.web:
                yield self.user(text=self.fill("Fetch the release notes for {svc} and summarise them."))
                yield from self.cycle(["http_get"], big=(size_b, None, "html"))
            else:
                cmd, kind_ = r.choice(tp.COMMANDS_BIG)
                yield self.user(text=self.fill(r.choice(["Show me the logs of {svc} on {target}.",
                                                         "What happened on {target} last night? Check the logs.",
                                                         "Why is {svc} on {target} slow? Look at everything.",
                                                         "Run the upgrade on {target} and show me the output."])))
                yield from self.cycle(["run"], big=(size_b, cmd, kind_))
            yield from self.body_cycles(size - (3 if s.legacy else 4), last)
            yield self.assistant_text(self.fill("The output is long; the relevant part: {svc} on {target} restarted {n} times "
                                                "after running out of memory. I suggest raising its limit."))
        else:
            raise AssertionError(kind)

    def messages(self):
        s, r = self.s, self.r
        if s.start >= LEGACY_END and r.random() < 0.85:
            s.goal = "pending"
        if s.prelude:
            yield self.msg("system", esc_json({"text": tp.SYSTEM_PRELUDE.format(web=", http_get" if s.web else "")}))
        rem = s.length - int(s.prelude) - sum(size for _, size, _ in s.specials)
        sizes = []
        while rem > 0:
            b = r.choices([0, 2, 3, 4, 6, 8, 12, 20, 30], [22, 22, 12, 14, 10, 8, 6, 4, 2])[0]
            if s.legacy:
                b = r.choices([0, 1, 2, 3, 4, 6], [25, 30, 20, 12, 8, 5])[0]
            size = min(2 + b, rem)
            if rem - size == 1:
                size += 1
            sizes.append(size)
            rem -= size
        turns = [("normal", n, 0) for n in sizes]
        lone = [t for t in turns if t[1] == 1]
        turns = [t for t in turns if t[1] != 1] + list(s.specials)
        r.shuffle(turns)
        turns += lone
        for i, (kind, size, n) in enumerate(turns):
            last = i == len(turns) - 1
            if kind == "normal":
                yield from self.normal_turn(size, last)
            elif kind == "oversized-message" and not s.legacy and r.random() < 0.05:
                yield from self.pasted_log_turn(size, last)
            else:
                yield from self.special_turn(kind, size, n, last)
            if s.goal == "pending":
                s.goal = s.title[:120] if s.title else None
        if s.goal == "pending":
            s.goal = None
        s.last_t = self.t
        self.flush_plans()

    def pasted_log_turn(self, size: int, last: bool):
        r, s = self.r, self.s
        size_b = min(OVERSIZE_CAP, int(OVERSIZE_MIN / (1.0 - r.random()) ** (1 / OVERSIZE_ALPHA)))
        sl = self.pools.slice(r, r.choice(["syslog", "journal", "docker"]), size_b)
        if s.title is None:
            s.title = "Here is the log, what is wrong?"
        yield self.msg("user", '{"text": ' + QPH + "}", "oversized-message",
                       "Here is the log, what is wrong?" + tp.COPY_NL + sl)
        yield from self.body_cycles(size - 2, last)
        yield self.assistant_text(self.fill("The log shows {svc} on {target} crashing every few minutes: "
                                            "connection refused to the database at 10.0.3.{n}."))


def lxc_variants(r: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        count = min(120, int(r.lognormvariate(math.log(12), 0.8)) + 1)
        cts = [{"vmid": 100 + i, "name": r.choice(tp.CT_NAMES), "status": r.choice(["running", "running", "running", "stopped"]),
                "node": r.choice(tp.NODES), "cpus": r.choice([1, 2, 4, 8]), "mem": r.randint(50, 8000) * 1048576,
                "maxmem": r.choice([512, 1024, 2048, 4096, 8192]) * 1048576, "uptime": r.randint(0, 10**7),
                "tags": r.choice(["", "prod", "staging", "prod;db", "monitoring"])} for i in range(count)]
        val = {"containers": cts, "count": count} if r.random() < 0.7 else cts
        out.append(esc_json(val))
    return out


# ============================================================================================
# loading


def merged(specs: list[Spec], pools, lxc, aux, stats):
    """All sessions' messages in global time order (concurrent sessions interleave)."""
    heap: list = []
    i, n, seq = 0, len(specs), 0
    while i < n or heap:
        while i < n and (not heap or specs[i].start <= heap[0][0]):
            spec = specs[i]
            gen = SessionGen(spec, pools, lxc, aux, stats).messages()
            first = next(gen, None)
            if first is not None:
                spec.first_t = first[0]
                heapq.heappush(heap, (first[0], seq, first, gen, spec))
                seq += 1
            i += 1
        t, sq, m, gen, spec = heapq.heappop(heap)
        yield spec, m
        nxt = next(gen, None)
        if nxt is not None:
            heapq.heappush(heap, (nxt[0], sq, nxt, gen, spec))


def session_row(spec: Spec, r: random.Random) -> str:
    bad = bool(spec.sigs & set(SIGNATURES) - {"oversized-message"})
    if spec.legacy and r.random() < 0.4:
        status = None
    elif bad:
        status = r.choices(["failed", "completed", "idle", "cancelled"], [55, 15, 20, 10])[0]
    else:
        status = r.choices(["completed", "idle", "active", "cancelled", "failed"], [75, 15, 2, 3, 5])[0]
    title = spec.title
    x = r.random()
    if title is None or x < 0.03:
        title = None
    elif x < 0.05:
        title = ""
    else:
        title = title.replace("\n", " ")[:72]
    updated = None if (spec.legacy and r.random() < 0.3) else ts(spec.last_t)
    return "\t".join(copy_text(v) for v in (spec.id, title, status, spec.goal, spec.model,
                                              ts(spec.first_t - 0.5), updated)) + "\n"


def pretty(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    return str(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dsn", default=os.environ.get("NOMOS_FORENSICS_BENCH_ADMIN_DSN",
                                                     "postgresql://postgres@127.0.0.1:5432/postgres"),
                    help="admin connection to the server (the new database is created from it)")
    ap.add_argument("--dbname", default=DEFAULT_DBNAME, help="database to (re)create; must start with nomos_forensics")
    ap.add_argument("--messages", type=int, default=1_000_000)
    ap.add_argument("--sessions", type=int, default=35_000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--scale", type=float, default=1.0, help="multiply sessions and messages")
    ap.add_argument("--long-session", type=int, default=0,
                    help=f"length of the long session (default {LONG_SESSION}, or messages/10 on tiny databases)")
    ap.add_argument("--meta", type=Path, default=None, help="where to write the metadata JSON")
    ap.add_argument("--no-logical-size", action="store_true",
                    help="skip the full scan that sums octet_length(content::text)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    args.messages = int(round(args.messages * args.scale))
    args.sessions = int(round(args.sessions * args.scale))
    if not args.dbname.startswith("nomos_forensics"):
        ap.error("--dbname must start with nomos_forensics (the database is dropped first)")
    if args.messages < 2 * args.sessions:
        ap.error("need at least two messages per session")
    meta_path = args.meta or (HERE / "out" / ("meta.json" if args.dbname == DEFAULT_DBNAME else f"meta-{args.dbname}.json"))
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))

    admin = args.dsn
    target = psycopg.conninfo.make_conninfo(admin, dbname=args.dbname)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()

    devdb.drop_database(admin, target)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(args.dbname)))
    version = devdb.apply_migrations(target)
    say(f"created {args.dbname}, schema at migration {version}")

    r = random.Random(args.seed)
    t = time.perf_counter()
    pool_bytes = max(150_000, min(2_500_000, args.messages * 3))
    pools = tp.LogPools(random.Random(args.seed + 1), pool_bytes)
    lxc = lxc_variants(random.Random(args.seed + 2), 300)
    specs, long_spec = build_specs(args, r)
    timings["prepare_s"] = time.perf_counter() - t
    say(f"planned {len(specs)} sessions / {args.messages} messages in {timings['prepare_s']:.1f}s")

    aux = Aux()
    stats = {k: 0 for k in ("double_encoded", "bare_string", "array", "content_key", "null_content",
                            "openai_function_call", "nameless_call", "arguments_string", "tool_calls_string",
                            "tool_calls_object", "legacy_tool_results")}
    labels: list[tuple[str, str, int]] = []
    role_counts: dict[str, int] = {}
    long_count = 0
    t = time.perf_counter()
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")  # skip FK triggers (data is consistent)
        conn.execute("SET synchronous_commit = off")
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("DROP INDEX messages_session_id_id_idx")
        with conn.transaction(), conn.cursor() as cur:
            cur.execute("TRUNCATE messages")  # same transaction as COPY: lets COPY FREEZE work
            with cur.copy("COPY messages (id, session_id, role, content, created_at) FROM STDIN WITH (FREEZE)") as cp:
                buf: list[str] = []
                size = 0
                mid = 0
                last_report = time.perf_counter()
                for spec, (mt, role, content, label) in merged(specs, pools, lxc, aux, stats):
                    mid += 1
                    line = f"{mid}\t{spec.id}\t{role}\t{content}\t{ts(mt)}\n"
                    buf.append(line)
                    size += len(line)
                    role_counts[role] = role_counts.get(role, 0) + 1
                    if spec is long_spec:
                        long_count += 1
                    if label is not None:
                        labels.append((spec.id, label, mid))
                    if size > (4 << 20):
                        cp.write("".join(buf))
                        buf.clear()
                        size = 0
                        now = time.perf_counter()
                        if now - last_report > 10:
                            last_report = now
                            say(f"  {mid:>9} messages  {now - t:6.1f}s")
                if buf:
                    cp.write("".join(buf))
        conn.execute("SELECT setval(pg_get_serial_sequence('messages', 'id'), %s)", (mid,))
        timings["load_messages_s"] = time.perf_counter() - t
        say(f"loaded {mid} messages in {timings['load_messages_s']:.1f}s")

        t = time.perf_counter()
        srand = random.Random(args.seed + 3)
        with conn.cursor() as cur, cur.copy(
                "COPY sessions (id, title, status, goal, model, created_at, updated_at) FROM STDIN") as cp:
            cp.write("".join(session_row(s, srand) for s in specs))
        # audit rows outside any chat
        for _ in range(max(5, len(specs) // 20)):
            tt = srand.uniform(AUDIT_START, T_END)
            aux.audit(None, "system", srand.choice(["backup", "vacuum", "cert-renew", "prune", "sync-inventory"]),
                      srand.choice(tp.NODES), "read_only", srand.choice(["allowed", "allowed", "error"]),
                      {"job": f"cron-{srand.randint(1, 40)}"}, tt)
        aux.load(conn)
        timings["load_aux_s"] = time.perf_counter() - t

        t = time.perf_counter()
        conn.execute("CREATE INDEX messages_session_id_id_idx ON messages (session_id, id)")
        timings["index_s"] = time.perf_counter() - t
        conn.execute("RESET session_replication_role")

        # ground truth, out of the way of the Nomos tables
        conn.execute("CREATE SCHEMA bench")
        conn.execute("CREATE TABLE bench.meta (key text PRIMARY KEY, value jsonb NOT NULL)")
        conn.execute("CREATE TABLE bench.labels (session_id uuid NOT NULL, label text NOT NULL, message_id bigint)")
        with conn.cursor() as cur, cur.copy("COPY bench.labels (session_id, label, message_id) FROM STDIN") as cp:
            cp.write("".join(f"{a}\t{b}\t{c}\n" for a, b, c in labels))

        # The oversized-message truth is what the database says: logical JSON > 50 KiB. Check the
        # generator agrees, and that no message sits in the ambiguous 50,000..51,200 byte band.
        t = time.perf_counter()
        big = conn.execute("""
            SELECT id, session_id::text, octet_length(content::text) FROM messages
            WHERE pg_column_size(content) > 4000 AND octet_length(content::text) > 50000""").fetchall()
        truth = {mid_ for mid_, _, n in big if n > 51200}
        gen_big = {m_ for _, lab, m_ in labels if lab == "oversized-message"}
        oversized_check = {"messages_over_51200": len(truth), "generator_labelled": len(gen_big),
                           "labelled_not_over": len(gen_big - truth), "over_not_labelled": len(truth - gen_big),
                           "ambiguous_50000_51200": sum(1 for _, _, n in big if n <= 51200)}
        conn.execute("DELETE FROM bench.labels WHERE label = 'oversized-message'")
        with conn.cursor() as cur, cur.copy("COPY bench.labels (session_id, label, message_id) FROM STDIN") as cp:
            cp.write("".join(f"{sid_}\toversized-message\t{mid_}\n" for mid_, sid_, n in big if n > 51200))
        timings["oversized_check_s"] = time.perf_counter() - t

        t = time.perf_counter()
        conn.execute("VACUUM ANALYZE")
        timings["vacuum_analyze_s"] = time.perf_counter() - t
        timings["total_load_s"] = time.perf_counter() - t0

        t = time.perf_counter()
        row = conn.execute("""
            SELECT pg_total_relation_size('messages'), pg_relation_size('messages'),
                   pg_table_size('messages') - pg_relation_size('messages')
                     - coalesce(pg_relation_size('messages', 'fsm'), 0) - coalesce(pg_relation_size('messages', 'vm'), 0),
                   pg_indexes_size('messages'), pg_database_size(current_database())""").fetchone()
        sizes = {"messages_total_bytes": row[0], "messages_heap_bytes": row[1], "messages_toast_bytes": row[2],
                 "messages_index_bytes": row[3], "database_bytes": row[4]}
        if not args.no_logical_size:
            row = conn.execute("SELECT sum(octet_length(content::text)), sum(pg_column_size(content)), "
                               "count(*) FILTER (WHERE octet_length(content::text) > 51200), "
                               "max(octet_length(content::text)) FROM messages").fetchone()
            sizes.update(logical_content_bytes=int(row[0]), column_content_bytes=int(row[1]),
                         messages_over_50kB=row[2], largest_message_bytes=row[3])
            sizes["compression_ratio_logical_vs_column"] = round(row[0] / row[1], 2)
        timings["size_scan_s"] = time.perf_counter() - t
        counts = dict(conn.execute("""
            SELECT 'sessions', count(*) FROM sessions UNION ALL SELECT 'messages', count(*) FROM messages
            UNION ALL SELECT 'audit_log', count(*) FROM audit_log UNION ALL SELECT 'nomos_plans', count(*) FROM nomos_plans
            UNION ALL SELECT 'nomos_plan_steps', count(*) FROM nomos_plan_steps
            UNION ALL SELECT 'nomos_plan_executions', count(*) FROM nomos_plan_executions""").fetchall())

        label_sessions: dict[str, set] = {}
        for sid, lab in conn.execute("SELECT DISTINCT session_id::text, label FROM bench.labels"):
            label_sessions.setdefault(lab, set()).add(sid)
        meta = {
            "dbname": args.dbname,
            "dsn": psycopg.conninfo.make_conninfo("", **{k: v for k, v in psycopg.conninfo.conninfo_to_dict(target).items()
                                                          if k != "password"}),
            "seed": args.seed, "scale": args.scale,
            "requested": {"sessions": args.sessions, "messages": args.messages},
            "counts": counts,
            "roles": role_counts,
            "long_session": {"id": long_spec.id, "messages": long_count},
            "marathon_sessions": [{"id": s.id, "messages": s.length} for s in specs if s.fixed and s is not long_spec],
            "signatures": {k: {"sessions": len(label_sessions.get(k, ())),
                               "examples": sorted(label_sessions.get(k, ()))[:5]}
                           for k in list(SIGNATURES) + sorted(NEAR_RATES)},
            "messy_shapes": stats,
            "oversized_check": oversized_check,
            "sizes": sizes,
            "timings": {k: round(v, 2) for k, v in timings.items()},
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        with conn.cursor() as cur:
            for k, v in meta.items():
                cur.execute("INSERT INTO bench.meta VALUES (%s, %s)", (k, json.dumps(v)))

    meta_path.parent.mkdir(parents=True, exist_ok=True)
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")

    say("")
    say(f"database        {args.dbname}  ({meta_path})")
    say("rows            " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    say("roles           " + ", ".join(f"{k} {v}" for k, v in sorted(role_counts.items())))
    say("signatures      " + ", ".join(f"{k} {v['sessions']}" for k, v in meta["signatures"].items()))
    say("oversized check " + ", ".join(f"{k} {v}" for k, v in oversized_check.items()))
    say("messy shapes    " + ", ".join(f"{k} {v}" for k, v in stats.items()))
    say("timings         " + ", ".join(f"{k} {v:.1f}" for k, v in timings.items()))
    say(f"messages size   total {pretty(sizes['messages_total_bytes'])} (heap {pretty(sizes['messages_heap_bytes'])}, "
        f"toast {pretty(sizes['messages_toast_bytes'])}, indexes {pretty(sizes['messages_index_bytes'])}); "
        f"database {pretty(sizes['database_bytes'])}")
    if "logical_content_bytes" in sizes:
        say(f"content         logical {pretty(sizes['logical_content_bytes'])}, stored {pretty(sizes['column_content_bytes'])} "
            f"(x{sizes['compression_ratio_logical_vs_column']}), {sizes['messages_over_50kB']} messages > 50 kB, "
            f"largest {pretty(sizes['largest_message_bytes'])}")
    say(f"long session    {long_spec.id} ({long_count} messages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
