#!/usr/bin/env python3
"""Write sql/sample/sample.sql and sql/sample/README.md: the sample Nomos sessions.

Deterministic (ids are uuid5 of a fixed key, times are fixed), so running it twice gives the
same files; tests/test_sample_and_compose.py checks the committed files match its output.

    python sql/sample/generate_sample.py            # rewrite both files next to this script
    python sql/sample/generate_sample.py --check    # exit 1 if they are out of date
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://nomos.example/forensics/sample")
DEMO_PREFIX = "c0a1e5a1"
DEMO_ID = "c0a1e5a1-5e55-4a1e-9b0d-7e57f0a1ed01"

# how long each kind of message takes to arrive after the previous one, in seconds
PACE = {"user": 45, "assistant": 7, "tool": 2, "system": 1}
RISK = {"list_lxcs": "read_only", "http_get": "read_only", "upsert_knowledge": "reversible_low",
        "propose_plan": "reversible_low", "complete_task": "reversible_low",
        "request_execution": "reversible_low"}


def literal(value: Any) -> str:
    """A SQL literal for None, str, int, bool or datetime."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        return "'" + value.strftime("%Y-%m-%d %H:%M:%S+00") + "'"
    return "'" + str(value).replace("'", "''") + "'"


def json_literal(value: Any) -> str:
    return literal(json.dumps(value, ensure_ascii=False))


@dataclass
class Generated:
    """A message whose content is computed in SQL (large tool outputs), from `select ... from`."""

    expression: str
    source: str


@dataclass
class Message:
    role: str
    content: Any
    at: datetime


@dataclass
class Step:
    plan: str
    generation: int
    seq: int
    title: str
    args: dict[str, Any]
    risk: str
    status: str
    created_at: datetime
    updated_at: datetime | None = None
    tool: str = "run"


@dataclass
class Session:
    key: str
    title: str | None
    status: str | None
    goal: str | None
    model: str | None
    start: datetime
    signatures: list[str]
    outcome: str
    notes: str
    id: str = ""
    touch_updated: bool = True
    messages: list[Message] = field(default_factory=list)
    plans: list[tuple[str, str | None, str, datetime]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    executions: list[dict[str, Any]] = field(default_factory=list)
    audit: list[dict[str, Any]] = field(default_factory=list)
    _calls: int = 0
    proposed_at: dict[tuple[str, int], datetime] = field(default_factory=dict)
    approved_at: datetime | None = None

    def __post_init__(self) -> None:
        self.id = self.id or str(uuid.uuid5(NAMESPACE, self.key))
        self.t = self.start

    # ------------------------------------------------------------------ the clock
    def tick(self, role: str, wait: float | None) -> datetime:
        self.t += timedelta(seconds=PACE[role] if wait is None else wait)
        return self.t

    def later(self, seconds: float) -> datetime:
        return self.t + timedelta(seconds=seconds)

    # ------------------------------------------------------------------ messages
    def raw(self, role: str, content: Any, wait: float | None = None) -> None:
        self.messages.append(Message(role, content, self.tick(role, wait)))

    def user(self, text: str, wait: float | None = None) -> None:
        self.raw("user", {"text": text}, wait)

    def system(self, text: str) -> None:
        self.raw("system", {"text": text})

    def say(self, text: str | None, wait: float | None = None, **extra: Any) -> None:
        self.raw("assistant", {"text": text, "tool_calls": [], "finish_reason": "stop", **extra}, wait)

    def new_call(self, name: str | None, args: Any) -> dict[str, Any]:
        self._calls += 1
        call: dict[str, Any] = {"id": f"call_{self._calls:02d}"}
        if name is not None:
            call["name"] = name
        call["arguments"] = args
        return call

    def calls(self, text: str, batch: list[tuple[str, Any, Any]], *, wait: float | None = None,
              audit: bool = True, **audit_kw: Any) -> list[dict[str, Any]]:
        """One assistant message calling every tool in `batch`, then one tool row per result."""
        made = [self.new_call(name, args) for name, args, _output in batch]
        self.raw("assistant", {"text": text, "tool_calls": made, "finish_reason": "tool_calls"}, wait)
        for call, (_name, args, output) in zip(made, batch):
            if audit:
                self.audit_call(call["name"], args, **audit_kw)
        for call, (_name, _args, output) in zip(made, batch):
            is_error = isinstance(output, Err)
            self.raw("tool", {"tool_call_id": call["id"], "name": call["name"],
                              "output": output.text if is_error else output, "is_error": is_error})
        return made

    def call(self, text: str, name: str, args: Any, output: Any, **kw: Any) -> dict[str, Any]:
        return self.calls(text, [(name, args, output)], **kw)[0]

    def run(self, text: str, target: str, command: str, output: Any, *, risk: str = "read_only",
            outcome: str = "allowed", step: tuple[str, int, int] | None = None,
            execution: str | None = None, wait: float | None = None,
            detail: dict[str, Any] | None = None) -> None:
        """A `run` call; with `step`, a plan step execution (recorded in nomos_plan_executions)."""
        args: dict[str, Any] = {"target": target, "command": command}
        if step:
            args["plan_id"] = self.plan_id(step[0])
            args["step"] = step[2]
        self.call(text, "run", args, output, risk=risk, outcome=outcome, wait=wait, detail=detail)
        if step or execution:
            requested = self.t - timedelta(seconds=1)
            status = execution or ("failed" if isinstance(output, Err) else "succeeded")
            self.execution(step, command, status, requested_at=requested, started_at=requested,
                           finished_at=self.t + timedelta(seconds=1),
                           error=output.text if isinstance(output, Err) else None)
            if step:
                self.set_step(step, "failed" if status == "failed" else "done", self.t)

    def complete(self, summary: str, final: str, cancelled: int = 0) -> None:
        self.call("", "complete_task", {"summary": summary},
                  {"ok": True, "cancelled_approvals": cancelled})
        self.say(final)

    def generated(self, role: str, expression: str, source: str, wait: float | None = None) -> None:
        self.messages.append(Message(role, Generated(expression, source), self.tick(role, wait)))

    # ------------------------------------------------------------------ lifecycle rows
    def audit_call(self, name: str | None, args: Any, *, risk: str | None = None,
                   outcome: str = "allowed", detail: dict[str, Any] | None = None) -> None:
        if not name:
            return
        target = None
        if isinstance(args, dict):
            target = args.get("target") or (f"lxc/{args['vmid']}" if "vmid" in args else None)
            if detail is None and "command" in args:
                detail = {"command": args["command"]}
        self.audit.append({"actor": "agent", "action": name, "target": target,
                           "risk_class": risk or RISK.get(name, "read_only"), "outcome": outcome,
                           "detail": detail, "at": self.t})

    def decision(self, actor: str, action: str, target: str, outcome: str,
                 detail: dict[str, Any] | None = None, risk: str = "reversible_high") -> None:
        self.audit.append({"actor": actor, "action": action, "target": target, "risk_class": risk,
                           "outcome": outcome, "detail": detail, "at": self.t})
        if outcome == "approved":
            self.approved_at = self.t

    def finish(self) -> None:
        """Plan step executions: requested when their plan generation was proposed, decided when
        a person approved the plan (read-only steps need no decision)."""
        risk = {(st.plan, st.generation, st.seq): st.risk for st in self.steps}
        for e in self.executions:
            if not e["step"]:
                continue
            e["requested_at"] = self.proposed_at[e["step"][:2]]
            if (e["decided_at"] is None and e["status"] != "pending_approval"
                    and risk[e["step"]] != "read_only" and self.approved_at is not None):
                e["decided_at"] = self.approved_at

    def plan_id(self, plan: str) -> str:
        return str(uuid.uuid5(NAMESPACE, f"{self.key}/plan/{plan}"))

    def propose(self, text: str, plan: str, goal: str, generation: int,
                steps: list[tuple[str, str, str, str]], *, status: str = "proposed",
                replaced: int = 0) -> None:
        """A propose_plan call: steps are (title, target, command, risk_class)."""
        if not any(p[0] == plan for p in self.plans):
            self.plans.append((plan, goal, status, self.later(PACE["assistant"])))
        spec = [{"seq": i, "title": title, "tool": "run",
                 "args": {"target": target, "command": command}, "risk_class": risk}
                for i, (title, target, command, risk) in enumerate(steps, 1)]
        needs_approval = sum(1 for s in spec if s["risk_class"] != "read_only")
        self.call(text, "propose_plan", {"goal": goal, "steps": spec},
                  {"plan_id": self.plan_id(plan), "generation": generation, "status": "proposed",
                   "steps": len(spec), "needs_approval": needs_approval,
                   **({"replaced_steps": replaced} if replaced else {})})
        self.proposed_at[(plan, generation)] = self.t
        for s in spec:
            self.steps.append(Step(plan, generation, s["seq"], s["title"], s["args"], s["risk_class"],
                                   "pending", self.t))

    def set_plan(self, plan: str, status: str) -> None:
        self.plans = [(p, g, status if p == plan else s, at) for p, g, s, at in self.plans]

    def set_step(self, ref: tuple[str, int, int], status: str, at: datetime) -> None:
        for step in self.steps:
            if (step.plan, step.generation, step.seq) == ref:
                step.status, step.updated_at = status, at

    def execution(self, step: tuple[str, int, int] | None, command: str, status: str, *,
                  tool: str = "run", requested_at: datetime | None = None,
                  decided_at: datetime | None = None, started_at: datetime | None = None,
                  finished_at: datetime | None = None, error: str | None = None) -> None:
        self.executions.append({"step": step, "tool": tool, "command": command, "status": status,
                                "requested_at": requested_at or self.t, "decided_at": decided_at,
                                "started_at": started_at, "finished_at": finished_at,
                                "error": error})


@dataclass
class Err:
    """A tool output flagged is_error."""

    text: str


def day(d: int, hh: int, mm: int) -> datetime:
    return datetime(2026, 11, d, hh, mm, tzinfo=timezone.utc)


# ---------------------------------------------------------------------- the homelab
RUNNING = [  # vmid, name, node, memory MB (IP is 10.0.20.<vmid>)
    (101, "pihole", "pve1", 512), (102, "unbound", "pve1", 256), (103, "proxy", "pve1", 512),
    (104, "vaultwarden", "pve1", 512), (105, "wiki", "pve1", 1024), (106, "paperless", "pve2", 2048),
    (107, "uptime-kuma", "pve1", 512), (108, "logs", "pve2", 2048), (111, "minio", "pve2", 1024),
    (112, "git", "pve1", 2048), (113, "ci-runner", "pve3", 4096), (114, "postgres", "pve2", 4096),
    (115, "nextcloud", "pve2", 4096), (116, "immich", "pve3", 6144), (118, "media", "pve3", 2048),
    (120, "apps", "pve3", 8192), (125, "mail-relay", "pve1", 256), (130, "grafana", "pve2", 1024),
    (135, "jellyfin", "pve3", 4096), (142, "homeassistant", "pve3", 2048),
]
UPTIME_DAYS = {101: 41, 102: 41, 103: 12, 104: 27, 105: 9, 106: 27, 107: 27, 108: 6, 111: 27,
               112: 10, 113: 2, 114: 27, 115: 18, 116: 5, 118: 14, 120: 8, 125: 27, 130: 27,
               135: 3, 142: 21}
ROOT_USE = {101: 31, 102: 22, 103: 44, 104: 37, 105: 58, 106: 49, 107: 26, 108: 91, 111: 54,
            112: 57, 113: 41, 114: 52, 115: 47, 116: 39, 118: 88, 120: 83, 125: 19, 130: 35,
            135: 56, 142: 42}


def lxc(vmid: int, name: str, node: str, mem: int, status: str = "running") -> dict[str, Any]:
    return {"vmid": vmid, "name": name, "node": node, "status": status,
            "ip": f"10.0.20.{vmid}", "memory_mb": mem}


def active_lxcs() -> dict[str, Any]:
    return {"state": "active", "count": len(RUNNING), "lxcs": [lxc(*row) for row in RUNNING]}


# ---------------------------------------------------------------------- the sessions
def clean_sessions() -> list[Session]:
    out = []

    s = Session("disk-usage-pve1", "Disk usage on pve1", "completed",
                "Report free space on pve1 after the backup warning", "gemini-2.5-flash",
                day(2, 8, 12), [], "achieved", "clean: one `run`, knowledge note, complete_task")
    s.user("How much disk space is left on pve1? The backup job warned about local-lvm last night.")
    s.run("I'll check the storage on pve1.", "pve1", "pvesm status && df -h /",
          "Name             Type     Status           Total            Used       Available        %\n"
          "backup            nfs     active      3844640768      2190445237      1654195531   56.97%\n"
          "local             dir     active        98497780        31540112        61908120   32.02%\n"
          "local-lvm     lvmthin     active       832888832       699626618       133262213   84.00%\n"
          "Filesystem            Size  Used Avail Use% Mounted on\n"
          "/dev/mapper/pve-root   94G   31G   59G  35% /")
    s.say("The root filesystem on pve1 has plenty of room (59G free, 35% used), but local-lvm is "
          "84% full: about 127 GiB free of 794 GiB. That is what the backup job warned about; thin "
          "pools get risky above 90%. Old snapshots are usually the quickest win. Shall I list them?")
    s.user("Leave them for now, thanks. Just note the numbers somewhere.")
    s.call("", "upsert_knowledge",
           {"key": "pve1/storage", "about": ["pve1", "local-lvm"],
            "content": "local-lvm on pve1 was 84% used on 2026-11-02; the backup job warns above 80%."},
           {"ok": True, "id": "kn_4f1a", "about": 2})
    s.complete("Reported pve1 storage (local-lvm 84%, root 35%) and saved a knowledge note.",
               "Done. I saved the storage figures as the knowledge note pve1/storage, so the next "
               "backup warning can be compared against them.")
    out.append(s)

    s = Session("renew-cert-git", "Renew TLS certificate for git.lab", "completed",
                "Renew the git.lab certificate before it expires", "claude-sonnet-4-5",
                day(4, 19, 40), [], "achieved", "clean: several `run` calls, root cause fixed")
    s.user("The certificate for git.lab expires in 3 days according to uptime-kuma. Can you renew it?")
    s.run("Let me see what certbot knows about it first.", "lxc/112", "certbot certificates",
          "Found the following certs:\n  Certificate Name: git.lab\n    Serial Number: 4a1c9e07d2b8f3\n"
          "    Key Type: ECDSA\n    Domains: git.lab\n"
          "    Expiry Date: 2026-11-07 19:02:11+00:00 (VALID: 2 days)\n"
          "    Certificate Path: /etc/letsencrypt/live/git.lab/fullchain.pem")
    s.run("It expires on 7 November. Renewing it and reloading nginx.", "lxc/112",
          "certbot renew --cert-name git.lab && nginx -t && systemctl reload nginx",
          "Renewing an existing certificate for git.lab\n\nCongratulations, all renewals succeeded:\n"
          "  /etc/letsencrypt/live/git.lab/fullchain.pem (success)\n"
          "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\n"
          "nginx: configuration file /etc/nginx/nginx.conf test is successful",
          risk="reversible_low")
    s.run("Renewed. Now let me find out why the automatic renewal did not happen.", "lxc/112",
          "systemctl list-timers certbot.timer --all",
          "NEXT LEFT LAST PASSED UNIT          ACTIVATES\n-    -    -    -      certbot.timer certbot.service\n\n"
          "1 timers listed.")
    s.run("The timer is not scheduled at all. Enabling it again.", "lxc/112",
          "systemctl enable --now certbot.timer",
          "Created symlink /etc/systemd/system/timers.target.wants/certbot.timer → "
          "/lib/systemd/system/certbot.timer.", risk="reversible_low")
    s.complete("Renewed the git.lab certificate (valid to 2027-02-02) and re-enabled certbot.timer on lxc 112.",
               "The git.lab certificate is renewed and valid until 2 February 2027. The real cause was "
               "that certbot.timer had been disabled on lxc 112; it is enabled again, so renewals will "
               "run twice a day from now on.")
    out.append(s)

    s = Session("dns-grafana", "Add DNS record for grafana.lab", "completed",
                "grafana.lab resolves to 10.0.20.130 on the LAN", "gemini-2.5-pro",
                day(22, 10, 5), [], "achieved",
                "clean plan: propose_plan, approval, steps run in seq order, knowledge writeback")
    s.user("Please add a DNS record grafana.lab -> 10.0.20.130 on the pihole and make sure it "
           "resolves from the proxy container.")
    s.propose("Here is a plan for the new record.", "p1", "Add grafana.lab to the local DNS", 1, [
        ("Add grafana.lab to /etc/pihole/custom.list", "lxc/101",
         "echo '10.0.20.130 grafana.lab' >> /etc/pihole/custom.list", "reversible_low"),
        ("Reload the pihole DNS service", "lxc/101", "pihole restartdns reload", "reversible_low"),
        ("Check resolution from the proxy", "lxc/103", "dig +short grafana.lab @10.0.20.101", "read_only"),
    ])
    s.say("I proposed a three-step plan. Steps 1 and 2 change the pihole configuration, so they "
          "wait for your approval; step 3 only reads.")
    s.user("Approved.")
    s.decision("user:alice", "approve", f"plan/{s.plan_id('p1')}", "approved", {"steps": [1, 2]},
               risk="reversible_low")
    s.set_plan("p1", "executing")
    s.run("", "lxc/101", "echo '10.0.20.130 grafana.lab' >> /etc/pihole/custom.list", "",
          risk="reversible_low", step=("p1", 1, 1))
    s.run("", "lxc/101", "pihole restartdns reload", "  [✓] Reloading DNS lists",
          risk="reversible_low", step=("p1", 1, 2))
    s.run("", "lxc/103", "dig +short grafana.lab @10.0.20.101", "10.0.20.130", step=("p1", 1, 3))
    s.call("", "upsert_knowledge",
           {"key": "dns/local-records", "about": ["pihole", "lxc/101", "grafana.lab"],
            "content": "Local DNS records live in /etc/pihole/custom.list on lxc 101; reload with "
                       "`pihole restartdns reload`."},
           {"ok": True, "id": "kn_77d0", "about": 3})
    s.set_plan("p1", "completed")
    s.complete("Added grafana.lab -> 10.0.20.130 on the pihole; verified from lxc 103.",
               "grafana.lab now resolves to 10.0.20.130 (checked from lxc 103 against the pihole). "
               "I also recorded where local DNS records live, for next time.")
    out.append(s)

    s = Session("destroyed-lxcs", "Containers destroyed this month", "completed",
                "List containers destroyed in November", "gemini-2.5-flash", day(24, 14, 30), [],
                "achieved", "clean: one bulk `list_lxcs` with the state filter")
    s.user("Which containers did we destroy this month? I need them for the inventory spreadsheet.")
    s.call("", "list_lxcs", {"state": "destroyed"},
           {"state": "destroyed", "count": 2, "lxcs": [
               {"vmid": 109, "name": "old-wiki", "node": "pve1", "status": "destroyed",
                "destroyed_at": "2026-11-03T17:20:00Z"},
               {"vmid": 121, "name": "test-k3s", "node": "pve3", "status": "destroyed",
                "destroyed_at": "2026-11-05T09:02:00Z"}]})
    s.complete("Listed the 2 containers destroyed in November.",
               "Two containers were destroyed in November: 109 old-wiki on pve1 (on the 3rd) and 121 "
               "test-k3s on pve3 (on the 5th). Their last backups are still on the NFS backup storage.")
    out.append(s)

    s = Session("backups-verify", "Verify last night's backups", "completed",
                "Every running container has a backup from last night", "gemini-2.5-pro",
                day(10, 7, 55), [], "achieved", "clean: bulk `list_lxcs` + one `run`")
    s.user("Did last night's vzdump run cover every running container? Check the backup storage.")
    s.call("Let me get the list of running containers first.", "list_lxcs", {"state": "active"},
           active_lxcs())
    s.run("", "pve1", "ls /mnt/pve/backup/dump/ | grep 2026_11_10 | grep -o 'lxc-[0-9]*' | sort -u",
          "\n".join(f"lxc-{row[0]}" for row in RUNNING))
    s.complete("All 20 running containers have a vzdump archive from 2026-11-10.",
               "Yes. All 20 running containers have a vzdump archive dated 2026-11-10 on the backup "
               "storage, so nothing is missing from last night's run.")
    out.append(s)

    s = Session("espacio-118", "Espacio en disco del contenedor 118", "completed",
                "Liberar espacio en el contenedor 118", "gemini-2.5-flash", day(26, 18, 20), [],
                "achieved", "Spanish user answered in Spanish: not a non-english-refusal")
    s.user("¿Cuánto espacio libre queda en el contenedor 118? El servidor de medios se queja de "
           "que el disco está lleno.")
    s.run("Voy a revisar el uso de disco del contenedor 118.", "lxc/118", "df -h / /mnt/media",
          "Filesystem                        Size  Used Avail Use% Mounted on\n"
          "/dev/mapper/pve-vm--118--disk--0   32G   30G  1.6G  95% /\n"
          "media:/export/media               7.3T  5.1T  2.2T  70% /mnt/media")
    s.run("", "lxc/118", "du -xsh /var/cache/* /var/log 2>/dev/null | sort -rh | head -5",
          "21G\t/var/cache/transcodes\n1.1G\t/var/log\n412M\t/var/cache/apt\n88M\t/var/cache/fontconfig\n"
          "4.0K\t/var/cache/ldconfig")
    s.say("El disco raíz del contenedor 118 está al 95 % y quedan 1,6 GB libres. El culpable es la "
          "caché de transcodificación en /var/cache/transcodes, que ocupa 21 GB; la biblioteca en "
          "/mnt/media está bien (70 %). ¿Quieres que vacíe la caché de transcodificación?")
    s.user("Sí, vacíala por favor.")
    s.run("", "lxc/118", "rm -rf /var/cache/transcodes/* && df -h /",
          "Filesystem                        Size  Used Avail Use% Mounted on\n"
          "/dev/mapper/pve-vm--118--disk--0   32G  9.2G   22G  30% /", risk="reversible_high")
    s.complete("Vaciada la caché de transcodificación del contenedor 118 (del 95 % al 30 %).",
               "Listo: he vaciado la caché de transcodificación y el disco raíz del contenedor 118 ha "
               "pasado del 95 % al 30 %, con 22 GB libres.")
    out.append(s)

    s = Session("backup-115-ja", "バックアップの確認", "completed",
                "コンテナ115の最新バックアップを確認する", "gemini-2.5-pro", day(13, 11, 3), [],
                "achieved", "Japanese user answered in Japanese (non-Latin script)")
    s.user("コンテナ115（nextcloud）の最新バックアップはいつですか？サイズも教えてください。")
    s.run("バックアップストレージを確認します。", "pve2",
          "ls -lt /mnt/pve/backup/dump/ | grep lxc-115 | head -3",
          "-rw-r--r-- 1 root root 18253611008 Nov 13 02:41 vzdump-lxc-115-2026_11_13-02_00_03.tar.zst\n"
          "-rw-r--r-- 1 root root 18198334464 Nov 12 02:40 vzdump-lxc-115-2026_11_12-02_00_02.tar.zst\n"
          "-rw-r--r-- 1 root root 18177028096 Nov 11 02:39 vzdump-lxc-115-2026_11_11-02_00_04.tar.zst")
    s.complete("Reported the latest backup of lxc 115 (2026-11-13, 17 GiB).",
               "コンテナ115（nextcloud）の最新バックアップは2026年11月13日02時00分に開始されたもので、"
               "サイズは約17GBです。前日と前々日のバックアップも正常に保存されています。")
    out.append(s)

    s = Session("nginx-version-web", "Is nginx on the proxy still supported?", "completed",
                "Check the nginx version on lxc 103 against the current stable release",
                "claude-sonnet-4-5", day(23, 16, 45), [], "achieved",
                "says \"no local knowledge\" but then calls `http_get`: not a no-web-tool finding")
    s.user("Is the nginx on the proxy container (lxc 103) still on a supported version? Check what "
           "the current stable release is.")
    s.run("", "lxc/103", "nginx -v", "nginx version: nginx/1.26.2")
    s.call("No local knowledge on the current nginx release, so I'll fetch it from nginx.org.",
           "http_get", {"url": "https://nginx.org/en/download.html"},
           {"status": 200, "url": "https://nginx.org/en/download.html",
            "text": "nginx: download\nMainline version\nCHANGES nginx-1.29.3 pgp nginx/Windows-1.29.3 pgp\n"
                    "Stable version\nCHANGES-1.28 nginx-1.28.0 pgp nginx/Windows-1.28.0 pgp\n"
                    "Legacy versions\nCHANGES-1.26 nginx-1.26.3 pgp nginx/Windows-1.26.3 pgp"})
    s.complete("lxc 103 runs nginx 1.26.2; current stable is 1.28.0.",
               "lxc 103 runs nginx 1.26.2. The current stable branch is 1.28 (1.28.0), so the 1.26 "
               "branch is legacy and no longer gets regular fixes. I'd move to the 1.28 package from "
               "the nginx.org repository; I can prepare a plan for that if you want.")
    out.append(s)

    s = Session("jellyfin-replan", "Restart Jellyfin after update", "completed",
                "Jellyfin plays media again after the automatic update", "gemini-2.5-pro",
                day(17, 20, 10), [], "achieved",
                "re-proposed plan: generation 1 steps correctly marked `replaced`")
    s.user("Jellyfin on lxc 135 updated itself and now playback fails. Restart it, please.")
    s.propose("", "p1", "Restart Jellyfin on lxc 135", 1, [
        ("Restart the jellyfin service", "lxc/135", "systemctl restart jellyfin", "reversible_low"),
        ("Check the service is active", "lxc/135", "systemctl is-active jellyfin", "read_only"),
    ])
    s.say("I proposed a two-step plan: restart the service, then check that it came back.")
    s.user("Also clear the transcode cache first, that's what broke it last time.")
    s.propose("", "p1", "Restart Jellyfin on lxc 135 with an empty transcode cache", 2, [
        ("Stop the jellyfin service", "lxc/135", "systemctl stop jellyfin", "reversible_low"),
        ("Clear the transcode cache", "lxc/135", "rm -rf /var/cache/jellyfin/transcodes/*",
         "reversible_high"),
        ("Start the jellyfin service", "lxc/135", "systemctl start jellyfin", "reversible_low"),
        ("Check the service is active", "lxc/135", "systemctl is-active jellyfin", "read_only"),
    ], replaced=2)
    for seq in (1, 2):
        s.set_step(("p1", 1, seq), "replaced", s.t)
    s.say("Updated the plan (generation 2): stop, clear the transcode cache, start, verify. The two "
          "earlier steps are marked as replaced.")
    s.user("Go ahead.")
    s.decision("user:marta", "approve", f"plan/{s.plan_id('p1')}", "approved", {"generation": 2})
    s.set_plan("p1", "executing")
    s.run("", "lxc/135", "systemctl stop jellyfin", "", risk="reversible_low", step=("p1", 2, 1))
    s.run("", "lxc/135", "rm -rf /var/cache/jellyfin/transcodes/*", "", risk="reversible_high",
          step=("p1", 2, 2))
    s.run("", "lxc/135", "systemctl start jellyfin", "", risk="reversible_low", step=("p1", 2, 3))
    s.run("", "lxc/135", "systemctl is-active jellyfin", "active", step=("p1", 2, 4))
    s.set_plan("p1", "completed")
    s.complete("Restarted Jellyfin on lxc 135 with an empty transcode cache.",
               "Jellyfin is running again on lxc 135 with an empty transcode cache, so playback should "
               "work now. If it fails again, the next thing to check is the permissions on the "
               "hardware transcoding device after the update.")
    out.append(s)

    s = Session("backup-schedule-kb", "Document the backup schedule", "completed",
                "Backup schedule recorded in knowledge", "claude-sonnet-4-5", day(19, 9, 30), [],
                "achieved", "clean: `upsert_knowledge` with an `about` array")
    s.user("Write our backup schedule into the knowledge base so the agent stops asking: vzdump at "
           "02:00 daily to the NFS 'backup' storage, keep 7 daily and 4 weekly, and the offsite "
           "rclone sync at 05:00.")
    s.call("", "upsert_knowledge",
           {"key": "backups/schedule", "about": ["vzdump", "backup", "rclone", "pve1", "pve2", "pve3"],
            "content": "vzdump runs daily at 02:00 to the NFS storage 'backup' (keep-daily=7, "
                       "keep-weekly=4). rclone syncs /mnt/pve/backup offsite at 05:00."},
           {"ok": True, "id": "kn_9c2e", "about": 6})
    s.complete("Recorded the backup schedule as backups/schedule.",
               "Saved as backups/schedule and linked to vzdump, rclone and the three nodes, so it "
               "comes up whenever any of them is mentioned.")
    out.append(s)
    return out


def runbook_failures() -> list[Session]:
    out = []

    s = Session("restart-nginx-105", "Restart nginx on lxc 105", "failed",
                "Restart nginx in container 105 (wiki.lab returns 502)", "gemini-2.5-flash",
                day(27, 21, 14), ["cant-run", "user-frustration", "empty-response", "unfinished-session"], "failed",
                "the demo session: refuses twice, the user corrects it twice, it ends on a blank reply "
                "and an error card",
                id=DEMO_ID)
    s.system("Nomos agent notes: every mutation goes through `run` (any shell command on a target). "
             "Prefer bulk tools over one call per item.")
    s.user("wiki.lab is throwing 502s. Can you restart nginx on lxc 105?")
    s.call("Let me check the container first.", "list_lxcs", {"state": "active"}, active_lxcs())
    s.say("LXC 105 (wiki) is running on pve1. However, I can't run `systemctl restart nginx` "
          "there: there is no restart action for services inside containers. You can restart it "
          "from the Proxmox console with `pct exec 105 -- systemctl restart nginx`.")
    s.user("No, I said restart it. You have the run tool, use it.")
    s.say("I'm sorry, but I can't run commands inside lxc 105. The actions available for containers "
          "are start, stop and snapshot.")
    s.user("That's not what I asked. Just run `pct exec 105 -- systemctl restart nginx` on pve1.")
    s.raw("assistant", {"text": "", "tool_calls": [], "finish_reason": "stop"}, wait=12)
    s.raw("assistant", {"text": None, "error": "The model returned an empty response 3 times. "
                                               "Try again or switch models.",
                        "finish_reason": "error"}, wait=20)
    out.append(s)

    s = Session("upgrade-pve3", "Upgrade packages on pve3", "completed",
                "pve3 fully upgraded", "gemini-2.5-flash", day(5, 22, 15), ["cant-run"], "failed",
                "refuses with \"I can't run\", then marks the task complete anyway")
    s.user("Run apt update and apt full-upgrade on pve3, then tell me if it needs a reboot.")
    s.say("I can't run apt on pve3: package upgrades on the Proxmox hosts are not an action I have. "
          "Please run `apt update && apt full-upgrade` from the pve3 shell and then check whether "
          "/var/run/reboot-required exists.")
    s.complete("Explained how to upgrade pve3 manually.",
               "I've closed this task. Let me know if anything else comes up on pve3.")
    out.append(s)

    s = Session("pve91-changes", "What changed in Proxmox VE 9.1?", "completed",
                "Summarise Proxmox VE 9.1 changes before the cluster upgrade", "gemini-2.5-flash",
                day(9, 13, 20), ["no-web-tool"], "failed",
                "\"No local knowledge on that\" and no `http_get` call (deployment without web tool)")
    s.user("What changed in Proxmox VE 9.1? Anything we should know before upgrading the cluster?")
    s.say("No local knowledge on that. Proxmox VE 9.1 is newer than anything in my knowledge base. "
          "The release notes are on the Proxmox wiki under Roadmap, if you want to read them "
          "before the upgrade.")
    out.append(s)

    s = Session("cve-openssh", "Is our OpenSSH affected by CVE-2026-31337?", "completed",
                "Find out whether CVE-2026-31337 affects our OpenSSH", "gemini-2.5-pro",
                day(20, 15, 5), ["no-web-tool"], "failed",
                "checks the version with `run`, then has no local knowledge of the CVE and no `http_get`")
    s.user("Is the OpenSSH on our containers affected by CVE-2026-31337? The security mailing list "
           "says to patch as soon as possible.")
    s.run("", "lxc/103", "ssh -V", "OpenSSH_9.2p1 Debian-2+deb12u7, OpenSSL 3.0.17 1 Jul 2025")
    s.say("Our containers run OpenSSH 9.2p1 (Debian package 9.2p1-2+deb12u7). I have no local "
          "knowledge on CVE-2026-31337, so I cannot tell whether this version is affected; I would "
          "need the advisory or the Debian security tracker entry.")
    s.user("Please check the advisory online then.")
    s.say("Sorry, I have no local knowledge on that CVE beyond what you paste here. If you paste "
          "the advisory or the Debian tracker entry, I'll check it against 9.2p1-2+deb12u7.")
    out.append(s)

    s = Session("certbot-timer-blank", "Check certbot timer on lxc 112", "idle",
                "certbot.timer is active on lxc 112", "gemini-2.5-flash", day(7, 8, 40),
                ["empty-response", "unfinished-session"], "failed",
                "ends on a blank assistant bubble: text \"\" and no tool calls")
    s.user("Is the certbot renewal timer active on lxc 112 now?")
    s.run("", "lxc/112", "systemctl is-active certbot.timer", "active")
    s.raw("assistant", {"text": "", "tool_calls": [], "finish_reason": "stop"})
    out.append(s)

    s = Session("restore-pihole-null", "Restore /etc/pihole from backup", "failed",
                "Pi-hole configuration restored from the last backup", "gemini-2.5-flash",
                day(8, 17, 0), ["empty-response", "unfinished-session"], "failed",
                "blank replies three ways: text null, text missing, then a persisted error card")
    s.user("The pihole config got wiped by the update. Restore /etc/pihole on lxc 101 from last "
           "night's backup.")
    s.raw("assistant", {"text": None, "tool_calls": None, "finish_reason": "stop"}, wait=9)
    s.raw("assistant", {"finish_reason": "stop"}, wait=11)
    s.raw("assistant", {"text": None, "error": "The model returned an empty response 3 times. "
                                               "Try again or switch models.",
                        "finish_reason": "error"}, wait=14)
    out.append(s)

    s = Session("varlog-108-zh", "Clean up /var/log on lxc 108", "idle",
                "Free disk space on lxc 108 by removing old logs", "gemini-2.5-flash",
                day(11, 23, 5), ["non-english-refusal", "cant-run"], "failed",
                "English request, Chinese boilerplate refusal (\"I cannot execute...\")")
    s.user("lxc 108 (logs) is at 97% disk. Please clean up old files under /var/log, anything older "
           "than 14 days.")
    s.say("抱歉，我无法帮助您完成此请求。作为一个人工智能助手，我不能执行可能导致数据丢失的操作。"
          "如果您有其他问题，请随时告诉我。")
    out.append(s)

    s = Session("docker-prune-es", "Prune docker images on lxc 120", "completed",
                "Free disk space on lxc 120", "gemini-2.5-flash-lite", day(16, 12, 30),
                ["non-english-refusal", "cant-run"], "failed",
                "English request, looks at the disk, then a Spanish boilerplate refusal")
    s.user("Please prune unused docker images on lxc 120, the root disk is almost full.")
    s.run("", "lxc/120", "docker system df",
          "TYPE            TOTAL     ACTIVE    SIZE      RECLAIMABLE\n"
          "Images          47        12        38.2GB    29.7GB (77%)\n"
          "Containers      12        12        1.1GB     0B (0%)\n"
          "Local Volumes   19        9         14.3GB    6.8GB (47%)\n"
          "Build Cache     0         0         0B        0B")
    s.say("Lo siento, pero no puedo ayudarte con esa solicitud. Como modelo de lenguaje, no tengo la "
          "capacidad de realizar esa acción. ¿Hay algo más en lo que pueda ayudarte?")
    out.append(s)

    s = Session("unbound-zone-ru", "Regenerate the unbound local zone", "failed",
                "unbound serves names for all DHCP leases", "gemini-2.5-flash", day(25, 10, 10),
                ["non-english-refusal", "cant-run"], "failed", "English request, Russian boilerplate refusal")
    s.user("Regenerate the unbound local-zone file on lxc 102 from the DHCP leases and reload unbound.")
    s.say("Извините, я не могу помочь с этим запросом. Пожалуйста, обратитесь к системному "
          "администратору.")
    out.append(s)

    s = Session("uptime-fanout", "Uptime and disk of every container", "completed",
                "Uptime and root disk usage of all running containers", "gemini-2.5-flash",
                day(14, 9, 0), ["tool-fanout"], "achieved",
                "40 `run` calls in one turn (uptime + df per container) after a bulk `list_lxcs`")
    s.user("Give me the uptime and root disk usage of every running container.")
    s.call("", "list_lxcs", {"state": "active"}, active_lxcs())
    s.calls("", [("run", {"target": f"lxc/{v}", "command": "uptime -p"},
                  f"up {UPTIME_DAYS[v]} days, {(v * 7) % 24} hours, {(v * 13) % 60} minutes")
                 for v, *_ in RUNNING])
    s.calls("", [("run", {"target": f"lxc/{v}", "command": "df -h / --output=pcent | tail -1"},
                  f" {ROOT_USE[v]}%") for v, *_ in RUNNING])
    s.complete("Reported uptime and root disk usage for 20 containers.",
               "All 20 running containers are up. The longest uptimes are pihole (101) and unbound "
               "(102) at 41 days; jellyfin (135) restarted most recently, 3 days ago. Root disks above "
               "80%: logs (108) at 91%, media (118) at 88% and apps (120) at 83%. Everything else is "
               "below 60%.")
    out.append(s)

    s = Session("inventory-fanout", "Container inventory with IPs", "completed",
                "Inventory of all containers: vmid, name, IP, memory", "gemini-2.5-flash",
                day(21, 14, 45), ["tool-fanout"], "achieved",
                "36 `list_lxcs` calls, one per vmid 100-135, instead of one bulk call")
    s.user("I need an inventory of every container: vmid, name, IP address and memory limit.")
    by_id = {row[0]: row for row in RUNNING}
    batch = []
    for vmid in range(100, 136):
        found = [lxc(*by_id[vmid])] if vmid in by_id else []
        batch.append(("list_lxcs", {"vmid": vmid}, {"count": len(found), "lxcs": found}))
    s.calls("I'll go through the containers one by one.", batch)
    listed = [row for row in RUNNING if row[0] <= 135]
    s.complete(f"Inventory of {len(listed)} containers.",
               "Here is the inventory of the containers with vmid 100 to 135:\n"
               + "\n".join(f"- {v} {name}: 10.0.20.{v}, {mem} MB" for v, name, _node, mem in listed))
    out.append(s)

    s = Session("nginx-crash-journal", "Why did nginx crash on lxc 105 last night?", "completed",
                "Root cause of the wiki.lab outage between 02:00 and 03:15", "claude-sonnet-4-5",
                day(18, 7, 30), ["oversized-message"], "achieved",
                "a ~120 KB journalctl dump persisted verbatim in one role='tool' row")
    s.user("wiki.lab was down between 02:00 and 03:15 last night. Why did nginx crash on lxc 105?")
    call = s.new_call("run", {"target": "lxc/105",
                              "command": "journalctl -u nginx -u wikijs --since '2026-11-18 02:00' "
                                         "--until '2026-11-18 03:20' --no-pager"})
    s.raw("assistant", {"text": "Let me read the journal for that window.", "tool_calls": [call],
                        "finish_reason": "tool_calls"})
    s.audit_call("run", call["arguments"])
    s.generated("tool", JOURNAL_EXPRESSION.format(call_id=call["id"]), JOURNAL_SOURCE, wait=4)
    s.say("The journal shows the cause. From 02:04 the Wiki.js backend on port 3000 stopped "
          "answering during its nightly search-index rebuild, so nginx logged hundreds of "
          "\"upstream prematurely closed connection\" errors, and at 03:12 the kernel OOM killer "
          "killed the node process, which has a 1 GiB memory limit. The container's memory limit "
          "is too small for the rebuild: raise it to 2 GiB (`pct set 105 -memory 2048`) or move "
          "the rebuild to a quieter hour.", wait=25)
    s.complete("Explained the wiki.lab outage: Wiki.js OOM during the search-index rebuild.",
               "No changes were made to lxc 105. Tell me if you want the memory limit raised.")
    out.append(s)

    s = Session("big-files-120", "What is eating the disk on lxc 120?", "completed",
                "Find what is using the root disk of lxc 120", "gemini-2.0-flash", day(3, 13, 0),
                ["oversized-message"], "achieved",
                "legacy row: a ~90 KB `du` listing of docker layers inside the assistant message's "
                "tool_results (hex names: large on disk too)")
    s.user("What's eating the disk on lxc 120 (apps)? List the biggest directories.")
    s.generated("assistant", DU_EXPRESSION, DU_SOURCE, wait=30)
    s.audit_call("run", {"target": "lxc/120",
                         "command": "du -h --max-depth=3 /var/lib/docker 2>/dev/null | sort -rh"})
    s.say("Docker is the culprit: /var/lib/docker takes 52G of the 64G root disk, 38G of it in image "
          "layers under overlay2 and 14G in volumes. Many layers belong to old image versions that "
          "no container uses any more, so `docker image prune -a` should free most of the 38G.")
    out.append(s)
    return out


def lifecycle_failures() -> list[Session]:
    out = []

    s = Session("security-updates-web", "Apply security updates to web containers", "completed",
                "Security updates on lxc 103, 105 and 112", "gemini-2.5-pro", day(13, 15, 0),
                ["orphaned-approval"], "partial",
                "complete_task called while step 3's execution is still `pending_approval`")
    s.user("Apply the pending security updates on the web containers: 103 (proxy), 105 (wiki) and "
           "112 (git).")
    s.propose("", "p1", "Security updates on the web containers", 1, [
        ("Upgrade packages on lxc 103", "lxc/103", "apt-get update && apt-get -y upgrade", "reversible_high"),
        ("Upgrade packages on lxc 105", "lxc/105", "apt-get update && apt-get -y upgrade", "reversible_high"),
        ("Upgrade packages on lxc 112", "lxc/112", "apt-get update && apt-get -y upgrade", "reversible_high"),
    ])
    s.say("I proposed three steps, one per container. Each changes packages, so each needs your "
          "approval.")
    s.user("Approve 103 and 105. Hold 112 until the git backup has finished.")
    s.decision("user:alice", "approve", f"plan/{s.plan_id('p1')}", "approved", {"steps": [1, 2]})
    s.set_plan("p1", "executing")
    s.run("", "lxc/103", "apt-get update && apt-get -y upgrade",
          "Reading package lists...\nCalculating upgrade...\n"
          "12 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.", risk="reversible_high",
          step=("p1", 1, 1))
    s.run("", "lxc/105", "apt-get update && apt-get -y upgrade",
          "Reading package lists...\nCalculating upgrade...\n"
          "9 upgraded, 0 newly installed, 0 to remove and 0 not upgraded.", risk="reversible_high",
          step=("p1", 1, 2))
    s.execution(("p1", 1, 3), "apt-get update && apt-get -y upgrade", "pending_approval")
    s.complete("Security updates applied to lxc 103 and 105; lxc 112 waits for approval.",
               "Updates are applied on lxc 103 (12 packages) and lxc 105 (9 packages), and both "
               "services came back. The lxc 112 step is still waiting for your approval.")
    out.append(s)

    s = Session("migrate-grafana", "Move lxc 130 (grafana) to pve3", "completed",
                "lxc 130 runs on pve3", "gemini-2.5-flash", day(9, 21, 0), ["plan-step-order"],
                "partial", "step 3 (migrate) and 4 run while step 2 (shut down) stays `approved`: "
                "out of seq order, never skipped")
    s.user("Move the grafana container (lxc 130) from pve2 to pve3 tonight.")
    s.propose("", "p1", "Migrate lxc 130 from pve2 to pve3", 1, [
        ("Snapshot lxc 130", "pve2", "pct snapshot 130 pre-migrate", "reversible_low"),
        ("Shut down lxc 130", "pve2", "pct shutdown 130", "reversible_high"),
        ("Migrate lxc 130 to pve3", "pve2", "pct migrate 130 pve3", "reversible_high"),
        ("Check grafana answers on pve3", "lxc/130", "curl -sf http://127.0.0.1:3000/api/health",
         "read_only"),
    ])
    s.say("Four steps: snapshot, shut down, migrate, then check grafana on pve3. Steps 2 and 3 need "
          "your approval.")
    s.user("Approved.")
    s.decision("user:alice", "approve", f"plan/{s.plan_id('p1')}", "approved", {"steps": [2, 3]})
    s.set_plan("p1", "executing")
    s.set_step(("p1", 1, 2), "approved", s.t)
    s.set_step(("p1", 1, 3), "approved", s.t)
    s.run("", "pve2", "pct snapshot 130 pre-migrate", "snapshot 'pre-migrate' created",
          risk="reversible_low", step=("p1", 1, 1))
    s.run("Migrating with --restart, which shuts the container down and starts it again around "
          "the move.", "pve2", "pct migrate 130 pve3 --restart",
          "2026-11-09 21:02:41 shutdown CT 130\n"
          "2026-11-09 21:02:55 starting migration of CT 130 to node 'pve3' (10.0.10.13)\n"
          "2026-11-09 21:04:37 start final cleanup\n"
          "2026-11-09 21:04:40 start container on target node\n"
          "2026-11-09 21:04:46 migration finished successfully (duration 00:02:05)",
          risk="reversible_high", step=("p1", 1, 3), wait=130)
    s.run("", "lxc/130", "curl -sf http://127.0.0.1:3000/api/health",
          '{"database": "ok", "version": "12.2.0"}', step=("p1", 1, 4))
    s.execution(("p1", 1, 2), "pct shutdown 130", "approved")
    s.set_plan("p1", "completed")
    s.complete("Migrated lxc 130 to pve3.",
               "lxc 130 (grafana) now runs on pve3 and answers its health check. I used `pct migrate "
               "--restart`, which shuts the container down and starts it again around the move, so "
               "the separate shutdown step was not needed. The pre-migrate snapshot is still there "
               "if you need to roll back.")
    out.append(s)

    s = Session("resize-115-stale", "Resize rootfs of lxc 115", "completed",
                "Grow the nextcloud rootfs", "gemini-2.5-flash", day(14, 16, 20), ["stale-plan-steps"],
                "achieved", "re-proposed plan (generation 2) left generation 1's steps `pending`")
    s.user("Grow the rootfs of lxc 115 (nextcloud) by 20G.")
    s.propose("", "p1", "Grow lxc 115 rootfs by 20G", 1, [
        ("Check free space in local-lvm", "pve2", "lvs pve/data", "read_only"),
        ("Grow rootfs by 20G", "pve2", "pct resize 115 rootfs +20G", "reversible_high"),
        ("Check the new size", "lxc/115", "df -h /", "read_only"),
    ])
    s.say("Plan proposed: check the thin pool, grow the rootfs by 20G, verify.")
    s.user("Make it 30G, the photo sync is bigger than I thought.")
    s.propose("", "p1", "Grow lxc 115 rootfs by 30G", 2, [
        ("Check free space in local-lvm", "pve2", "lvs pve/data", "read_only"),
        ("Grow rootfs by 30G", "pve2", "pct resize 115 rootfs +30G", "reversible_high"),
        ("Check the new size", "lxc/115", "df -h /", "read_only"),
    ])
    s.say("Updated: the plan now grows the rootfs by 30G.")
    s.user("Approved.")
    s.decision("user:marta", "approve", f"plan/{s.plan_id('p1')}", "approved", {"generation": 2})
    s.set_plan("p1", "executing")
    s.run("", "pve2", "lvs pve/data",
          "  LV   VG  Attr       LSize   Pool Origin Data%  Meta%\n  data pve twi-aotz-- 794.30g             61.12  2.04",
          step=("p1", 2, 1))
    s.run("", "pve2", "pct resize 115 rootfs +30G",
          "  Size of logical volume pve/vm-115-disk-0 changed from 32.00 GiB to 62.00 GiB.\n"
          "  Logical volume pve/vm-115-disk-0 successfully resized.\nresize2fs 1.47.0 (5-Feb-2023)\n"
          "The filesystem on /dev/loop0 is now 16252928 (4k) blocks long.", risk="reversible_high",
          step=("p1", 2, 2))
    s.run("", "lxc/115", "df -h /",
          "Filesystem                        Size  Used Avail Use% Mounted on\n"
          "/dev/mapper/pve-vm--115--disk--0   62G   31G   29G  52% /", step=("p1", 2, 3))
    s.set_plan("p1", "completed")
    s.complete("Grew lxc 115 rootfs to 62G.",
               "The rootfs of lxc 115 is now 62G (it was 32G), with 29G free.")
    out.append(s)

    s = Session("mail-relay-retired", "Restart the mail relay", "completed",
                "Postfix on lxc 125 delivers the queued mail", "gemini-2.5-flash", day(3, 9, 10),
                ["retired-tool"], "achieved",
                "calls the retired `request_execution` tool first, then retries with `run`")
    s.user("Postfix on the mail relay (lxc 125) is stuck with a full queue. Restart it and flush the queue.")
    s.call("", "request_execution",
           {"target": "lxc/125", "command": "systemctl restart postfix && postqueue -f",
            "risk_class": "reversible_low"},
           Err("request_execution is retired: all mutations go through `run`"), outcome="error")
    s.execution(None, "systemctl restart postfix && postqueue -f", "failed", tool="request_execution",
                error="request_execution is retired: all mutations go through `run`")
    s.run("That tool is retired; retrying with `run`.", "lxc/125",
          "systemctl restart postfix && postqueue -f && mailq | tail -1", "Mail queue is empty",
          risk="reversible_low", execution="succeeded")
    s.complete("Restarted postfix on lxc 125 and flushed the queue.",
               "Postfix on lxc 125 is restarted and the queue is flushed; mailq reports it empty now. "
               "My first attempt used the retired request_execution tool, and the retry went through "
               "`run`.")
    out.append(s)

    s = Session("docker-volumes-blocked", "Wipe old docker volumes on lxc 120", "failed",
                "Free disk space on lxc 120 by removing old docker volumes", "gemini-2.5-flash",
                day(28, 11, 40), ["blocked-action"], "failed",
                "a destructive `run` blocked by policy (audit_log outcome `blocked`)")
    s.user("Wipe all the old docker volumes on lxc 120, we need the space.")
    s.run("", "lxc/120", "rm -rf /var/lib/docker/volumes/*",
          Err("blocked by policy: destructive command outside an approved plan (risk_class=destructive)"),
          risk="destructive", outcome="blocked",
          detail={"command": "rm -rf /var/lib/docker/volumes/*",
                  "reason": "destructive command outside an approved plan"})
    s.say("That command was blocked by Nomos policy: deleting everything under "
          "/var/lib/docker/volumes is classed as destructive and needs an approved plan. It would "
          "also delete volumes that running containers still use. A safer route is `docker volume "
          "prune`, which only removes unused volumes. Shall I propose that as a plan?")
    out.append(s)

    s = Session("staging-stop-denied", "Stop lxc 140 (staging)", "cancelled",
                "Shut down the staging container for the week", "gemini-2.5-pro", day(29, 18, 25),
                ["blocked-action"], "failed",
                "the approver (marta) denied the step: audit_log outcome `denied`, execution cancelled")
    s.user("Shut down the staging container, lxc 140, we don't need it this week.")
    s.propose("", "p1", "Shut down lxc 140", 1, [
        ("Shut down lxc 140", "pve2", "pct shutdown 140", "reversible_high"),
    ])
    s.say("I proposed a one-step plan to shut down lxc 140; it needs an approval.")
    s.t += timedelta(minutes=6)
    s.decision("user:marta", "deny", f"plan/{s.plan_id('p1')}", "denied",
               {"reason": "QA is still using staging until Friday"})
    s.system("Approval denied by marta: QA is still using staging until Friday.")
    s.execution(("p1", 1, 1), "pct shutdown 140", "cancelled", decided_at=s.t)
    s.set_step(("p1", 1, 1), "cancelled", s.t)
    s.set_plan("p1", "cancelled")
    s.say("Marta denied the shutdown because QA is still using staging until Friday, so lxc 140 "
          "keeps running. I've cancelled the plan; ask again after Friday and I'll propose it again.")
    out.append(s)

    s = Session("backup-size-120", "Backup size for lxc 120", "completed",
                "Size of the backups of lxc 120", "gemini-2.5-flash", day(10, 17, 30),
                ["user-frustration"], "achieved",
                "answers about lxc 112 twice; the user corrects it twice")
    s.user("How big are the backups of lxc 120?")
    s.run("", "pve1", "ls -lh /mnt/pve/backup/dump/ | grep lxc-112 | tail -3",
          "-rw-r--r-- 1 root root 2.3G Nov  8 02:14 vzdump-lxc-112-2026_11_08-02_10_41.tar.zst\n"
          "-rw-r--r-- 1 root root 2.3G Nov  9 02:14 vzdump-lxc-112-2026_11_09-02_10_38.tar.zst\n"
          "-rw-r--r-- 1 root root 2.3G Nov 10 02:14 vzdump-lxc-112-2026_11_10-02_10_44.tar.zst")
    s.say("The backups of lxc 112 (git) are about 2.3G each, and the last seven are all present.")
    s.user("No, I said lxc 120, not 112.")
    s.say("Sorry about that. The most recent backup of lxc 112 is 2.3G, taken at 02:14 today.")
    s.user("That's not what I asked. 120. One-two-zero. The docker apps container.")
    s.run("", "pve1", "ls -lh /mnt/pve/backup/dump/ | grep lxc-120 | tail -3",
          "-rw-r--r-- 1 root root  11G Nov  8 02:31 vzdump-lxc-120-2026_11_08-02_16_02.tar.zst\n"
          "-rw-r--r-- 1 root root  12G Nov  9 02:32 vzdump-lxc-120-2026_11_09-02_16_10.tar.zst\n"
          "-rw-r--r-- 1 root root  12G Nov 10 02:31 vzdump-lxc-120-2026_11_10-02_16_05.tar.zst")
    s.complete("Reported backup sizes of lxc 120 (11-12G).",
               "You're right, apologies. The backups of lxc 120 (apps) are 11G to 12G each; the latest "
               "is from today at 02:31 and all recent daily archives are present.")
    out.append(s)

    s = Session("homeassistant-update", "Update Home Assistant", "active",
                "Home Assistant on lxc 142 runs the latest release", "gemini-2.5-flash",
                day(15, 19, 50), ["unfinished-session"], "partial",
                "transcript ends on a tool result with no assistant reply")
    s.user("Update Home Assistant on lxc 142 to the latest release.")
    s.run("Starting the update.", "lxc/142", "ha core update",
          "Processing... this may take a few minutes", risk="reversible_high")
    out.append(s)

    s = Session("dns-down-unanswered", "DNS not resolving", None,
                "LAN name resolution works again", "gemini-2.5-pro", day(15, 8, 5),
                ["unfinished-session"], "partial",
                "NULL status; transcript ends on a user message with no reply")
    s.user("Nothing resolves on the LAN since 07:50. Is the pihole down?")
    s.run("", "lxc/101", "pihole status",
          "  [✗] DNS service is NOT running\n  [✓] Pi-hole blocking is enabled")
    s.say("The Pi-hole DNS service on lxc 101 is not running, which explains the failures. Do you "
          "want me to restart it with `pihole restartdns`?")
    s.user("Yes, restart it now please.")
    out.append(s)
    return out


def messy_sessions() -> list[Session]:
    out = []

    s = Session("legacy-import", None, None, None, None, day(1, 9, 0), [], "achieved",
                "pre-release rows: NULL title/status/model/updated_at, bare-string content, "
                "arguments as a JSON string, legacy tool_results, double-encoded content",
                touch_updated=False)
    s.raw("system", "You are Nomos, a homelab operations agent.")
    s.raw("user", "how full is /var/lib/vz on pve2?")
    s.raw("assistant", {"text": "Checking.",
                        "tool_calls": [{"id": "call_01", "name": "run",
                                        "arguments": json.dumps({"target": "pve2",
                                                                 "command": "df -h /var/lib/vz"})}],
                        "tool_results": [{"tool_call_id": "call_01", "name": "run", "is_error": False,
                                          "output": "Filesystem      Size  Used Avail Use% Mounted on\n"
                                                    "/dev/sdb1       580G  412G  168G  71% /var/lib/vz"}],
                        "finish_reason": "stop"})
    s.audit_call("run", {"target": "pve2", "command": "df -h /var/lib/vz"})
    s.raw("assistant", json.dumps({"text": "/var/lib/vz on pve2 is 71% full: 412G used of 580G, "
                                           "168G free. Most of it is VM and container disk images.",
                                   "tool_calls": [], "finish_reason": "stop"}))
    out.append(s)

    s = Session("logrotate-array", "", "completed", "Rotate nginx logs on lxc 103",
                "gemini-2.5-flash", day(2, 21, 30), [], "achieved",
                "empty title; array content with a tool_use part; text missing; tool_calls null")
    s.user("Rotate the nginx logs on lxc 103 and tell me how much space it freed.")
    command = "du -sh /var/log/nginx && logrotate -f /etc/logrotate.d/nginx && du -sh /var/log/nginx"
    s.raw("assistant", [{"type": "text", "text": "Rotating the nginx logs on lxc 103 now."},
                        {"type": "tool_use", "id": "call_01", "name": "run",
                         "input": {"target": "lxc/103", "command": command}}])
    s.audit_call("run", {"target": "lxc/103", "command": command}, risk="reversible_low")
    s.raw("tool", {"tool_call_id": "call_01", "name": "run",
                   "output": "1.9G\t/var/log/nginx\n38M\t/var/log/nginx", "is_error": False})
    s.raw("assistant", {"tool_calls": [{"id": "call_02", "name": "complete_task",
                                        "arguments": {"summary": "Rotated nginx logs on lxc 103."}}],
                        "finish_reason": "tool_calls"})
    s.audit_call("complete_task", {})
    s.raw("tool", {"tool_call_id": "call_02", "name": "complete_task",
                   "output": {"ok": True, "cancelled_approvals": 0}, "is_error": False})
    s.raw("assistant", {"text": "Done: the nginx logs on lxc 103 went from 1.9G to 38M, so about "
                                "1.86G was freed.", "tool_calls": None, "finish_reason": "stop"})
    out.append(s)

    s = Session("open-ports-nameless", None, "idle", None, "claude-sonnet-4-5", day(25, 22, 10), [],
                "achieved",
                "NULL title and goal; a tool call with no name; text null; arguments as a JSON "
                "string; tool_calls and finish_reason missing")
    s.user("Which ports are open on pve1? Just the listening TCP sockets.")
    s.raw("assistant", {"text": None, "tool_calls": [{"id": "call_01", "arguments": {
        "target": "pve1", "command": "ss -tlnp"}}], "finish_reason": "tool_calls"})
    s.raw("tool", {"tool_call_id": "call_01", "name": None,
                   "output": "tool call rejected: missing tool name", "is_error": True})
    s.raw("assistant", {"text": "", "tool_calls": [{"id": "call_02", "name": "run",
                                                    "arguments": json.dumps({"target": "pve1",
                                                                             "command": "ss -tlnp"})}],
                        "finish_reason": "tool_calls"})
    s.audit_call("run", {"target": "pve1", "command": "ss -tlnp"})
    s.raw("tool", {"tool_call_id": "call_02", "name": "run", "is_error": False, "output":
                   "State  Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n"
                   "LISTEN 0      4096         0.0.0.0:111       0.0.0.0:*     users:((\"rpcbind\",pid=612,fd=4))\n"
                   "LISTEN 0      128          0.0.0.0:22        0.0.0.0:*     users:((\"sshd\",pid=903,fd=3))\n"
                   "LISTEN 0      4096       127.0.0.1:85        0.0.0.0:*     users:((\"pvedaemon worke\",pid=1215,fd=6))\n"
                   "LISTEN 0      4096               *:8006            *:*     users:((\"pveproxy worker\",pid=1288,fd=6))\n"
                   "LISTEN 0      4096               *:3128            *:*     users:((\"spiceproxy work\",pid=1301,fd=6))"})
    s.raw("assistant", {"text": "pve1 listens on TCP 22 (sshd), 8006 (pveproxy), 3128 (spiceproxy), "
                                "85 (pvedaemon, localhost only) and 111 (rpcbind, on all interfaces). "
                                "rpcbind is only needed for NFS version 3; bind it to localhost or "
                                "disable it if you only use NFS version 4."})
    out.append(s)

    s = Session("zfs-null-content", "Check ZFS pool health", "completed",
                "ZFS pools on pve3 are healthy and scrubbed", "gemini-2.5-flash", day(12, 22, 45),
                ["empty-response"], "achieved",
                "an assistant row whose content is JSON null (turn 1); later turns recover")
    s.user("Check the health of the ZFS pool on pve3.")
    s.raw("assistant", None)
    s.run("", "pve3", "zpool status -x", "all pools are healthy")
    s.say("All ZFS pools on pve3 are healthy; the last scrub of tank finished on 8 November "
          "without errors.")
    s.user("Great. Schedule a scrub for tonight as well.")
    s.run("", "pve3", "echo 'zpool scrub tank' | at 23:30",
          "warning: commands will be executed using /bin/sh\njob 14 at Thu Nov 19 23:30:00 2026",
          risk="reversible_low")
    s.complete("Checked pve3 ZFS health and scheduled a scrub at 23:30.",
               "The scrub of tank is scheduled for 23:30 tonight (at job 14). I'll be able to show the "
               "result tomorrow with `zpool status`.")
    out.append(s)
    return out


# ---------------------------------------------------------------------- large outputs in SQL
# ~120 KB of nginx/Wiki.js journal; md5-derived request paths keep it from compressing well, so
# the row is large on disk too, not only as JSON text.
JOURNAL_EXPRESSION = """jsonb_build_object(
           'tool_call_id', '{call_id}', 'name', 'run', 'is_error', false,
           'output', '-- Journal begins at Sun 2026-09-06 10:12:31 UTC, ends at Wed 2026-11-18 07:30:41 UTC. --'
                     || chr(10) || string_agg(line, chr(10) ORDER BY n) || chr(10)
                     || 'Nov 18 03:12:44 wiki kernel: Out of memory: Killed process 231 (node) total-vm:1873420kB, anon-rss:1003112kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:2816kB oom_score_adj:0' || chr(10)
                     || 'Nov 18 03:12:44 wiki systemd[1]: wikijs.service: Main process exited, code=killed, status=9/KILL' || chr(10)
                     || 'Nov 18 03:12:45 wiki systemd[1]: wikijs.service: Failed with result ''oom-kill''.' || chr(10)
                     || 'Nov 18 03:15:02 wiki systemd[1]: wikijs.service: Scheduled restart job, restart counter is at 1.' || chr(10)
                     || 'Nov 18 03:15:09 wiki node[4127]: 2026-11-18T03:15:09.112Z [MASTER] info: HTTP Server: [ RUNNING ]')"""
JOURNAL_SOURCE = """(
    SELECT n, CASE WHEN n % 9 = 0 THEN
        format('Nov 18 %s wiki node[231]: 2026-11-18T%s.%sZ [JOB] info: search index rebuild: indexed page %s/%s (%s) heap=%sMB',
               to_char(timestamp '2026-11-18 02:04:00' + n * interval '11 seconds', 'HH24:MI:SS'),
               to_char(timestamp '2026-11-18 02:04:00' + n * interval '11 seconds', 'HH24:MI:SS'),
               lpad((n * 37 % 1000)::text, 3, '0'), n, 4217,
               'kb/' || substr(md5('page' || n), 1, 10) || '/' || substr(md5('slug' || n), 1, 14),
               612 + n * 389 / 350)
    ELSE
        format('Nov 18 %s wiki nginx[214]: 2026/11/18 %s [error] 214#214: *%s upstream prematurely closed connection while reading response header from upstream, client: 10.0.20.%s, server: wiki.lab, request: "GET /%s HTTP/1.1", upstream: "http://127.0.0.1:3000/%s", host: "wiki.lab", referrer: "https://wiki.lab/%s"',
               to_char(timestamp '2026-11-18 02:04:00' + n * interval '11 seconds', 'HH24:MI:SS'),
               to_char(timestamp '2026-11-18 02:04:00' + n * interval '11 seconds', 'HH24:MI:SS'),
               18000 + n * 7, 10 + n * 29 % 230,
               substr(md5('req' || n), 1, 16), substr(md5('req' || n), 1, 16),
               substr(md5('ref' || n), 1, 20))
    END AS line
    FROM generate_series(1, 350) AS n
) AS journal"""

# ~90 KB of `du` output carried in a legacy assistant row (tool_results inside the message);
# docker layer directories are named by 64 hex digits, so the row stays large on disk
DU_EXPRESSION = """jsonb_build_object(
           'text', 'Here is what I found.',
           'tool_calls', jsonb_build_array(jsonb_build_object(
               'id', 'call_01', 'name', 'run',
               'arguments', jsonb_build_object('target', 'lxc/120',
                                               'command', 'du -h --max-depth=3 /var/lib/docker 2>/dev/null | sort -rh'))),
           'tool_results', jsonb_build_array(jsonb_build_object(
               'tool_call_id', 'call_01', 'name', 'run', 'is_error', false,
               'output', '52G' || chr(9) || '/var/lib/docker' || chr(10)
                         || '38G' || chr(9) || '/var/lib/docker/overlay2' || chr(10)
                         || '14G' || chr(9) || '/var/lib/docker/volumes' || chr(10)
                         || string_agg(line, chr(10) ORDER BY n))),
           'finish_reason', 'stop')"""
DU_SOURCE = """(
    SELECT n, format('%sM' || chr(9) || '/var/lib/docker/overlay2/%s/%s',
                     (96000 / (n + 40))::text, encode(sha256(('layer' || n)::bytea), 'hex'),
                     (ARRAY['diff', 'diff/usr', 'diff/usr/lib', 'diff/opt', 'diff/app/node_modules',
                            'diff/var/lib'])[1 + n % 6]) AS line
    FROM generate_series(1, 820) AS n
) AS du"""


# ---------------------------------------------------------------------- output
def all_sessions() -> list[Session]:
    sessions = clean_sessions() + runbook_failures() + lifecycle_failures() + messy_sessions()
    for s in sessions:
        s.finish()
    ids = [s.id for s in sessions]
    assert len(set(ids)) == len(ids), "duplicate session ids"
    demo = [s for s in sessions if s.id.startswith(DEMO_PREFIX)]
    assert [s.id for s in demo] == [DEMO_ID], "exactly one session may start with the demo prefix"
    for s in sessions:
        times = [m.at for m in s.messages]
        assert times == sorted(times) and len(set(times)) == len(times), s.key
    return sorted(sessions, key=lambda s: s.start)


def session_sql(s: Session) -> list[str]:
    updated = s.messages[-1].at if s.touch_updated and s.messages else None
    out = [f"-- {s.id[:8]} {s.title or '(untitled)'}: {', '.join(s.signatures) or 'no finding expected'}",
           "INSERT INTO sessions (id, title, status, goal, model, created_at, updated_at) VALUES\n"
           f"    ({literal(s.id)}, {literal(s.title)}, {literal(s.status)}, {literal(s.goal)}, "
           f"{literal(s.model)}, {literal(s.start)}, {literal(updated)});"]
    pending: list[str] = []

    def flush() -> None:
        if pending:
            out.append("INSERT INTO messages (session_id, role, content, created_at) VALUES\n"
                       + ",\n".join(pending) + ";")
            pending.clear()

    for m in s.messages:
        if isinstance(m.content, Generated):
            flush()
            out.append("INSERT INTO messages (session_id, role, content, created_at)\n"
                       f"SELECT {literal(s.id)}, {literal(m.role)},\n       {m.content.expression},\n"
                       f"       {literal(m.at)}\nFROM {m.content.source};")
        else:
            pending.append(f"    ({literal(s.id)}, {literal(m.role)}, {json_literal(m.content)}, "
                           f"{literal(m.at)})")
    flush()
    if s.plans:
        out.append("INSERT INTO nomos_plans (id, session_id, goal, status, created_at) VALUES\n"
                   + ",\n".join(f"    ({literal(s.plan_id(p))}, {literal(s.id)}, {literal(g)}, "
                                f"{literal(st)}, {literal(at)})" for p, g, st, at in s.plans) + ";")
    if s.steps:
        out.append("INSERT INTO nomos_plan_steps (plan_id, seq, generation, title, tool, args, "
                   "risk_class, status, created_at, updated_at) VALUES\n"
                   + ",\n".join(f"    ({literal(s.plan_id(st.plan))}, {st.seq}, {st.generation}, "
                                f"{literal(st.title)}, {literal(st.tool)}, {json_literal(st.args)}, "
                                f"{literal(st.risk)}, {literal(st.status)}, {literal(st.created_at)}, "
                                f"{literal(st.updated_at)})" for st in s.steps) + ";")
    if s.executions:
        rows = []
        for e in s.executions:
            if e["step"]:
                plan, generation, seq = e["step"]
                plan_id = literal(s.plan_id(plan))
                step_id = (f"(SELECT id FROM nomos_plan_steps WHERE plan_id = {plan_id} "
                           f"AND generation = {generation} AND seq = {seq})")
            else:
                plan_id = step_id = "NULL"
            rows.append(f"    ({literal(s.id)}, {plan_id}, {step_id}, {literal(e['tool'])}, "
                        f"{literal(e['command'])}, {literal(e['status'])}, "
                        f"{literal(e['requested_at'])}, {literal(e['decided_at'])}, "
                        f"{literal(e['started_at'])}, {literal(e['finished_at'])}, "
                        f"{literal(e['error'])})")
        out.append("INSERT INTO nomos_plan_executions (session_id, plan_id, step_id, tool, command, "
                   "status, requested_at, decided_at, started_at, finished_at, error) VALUES\n"
                   + ",\n".join(rows) + ";")
    if s.audit:
        out.append("INSERT INTO audit_log (session_id, actor, action, target, risk_class, outcome, "
                   "detail, created_at) VALUES\n"
                   + ",\n".join(f"    ({literal(s.id)}, {literal(a['actor'])}, {literal(a['action'])}, "
                                f"{literal(a['target'])}, {literal(a['risk_class'])}, "
                                f"{literal(a['outcome'])}, "
                                f"{json_literal(a['detail']) if a['detail'] is not None else 'NULL'}, "
                                f"{literal(a['at'])})" for a in s.audit) + ";")
    return out


OUTSIDE_CHAT_AUDIT = """-- audit rows outside any chat (session_id NULL): scheduled jobs and operator actions
INSERT INTO audit_log (session_id, actor, action, target, risk_class, outcome, detail, created_at) VALUES
    (NULL, 'system', 'vzdump', 'pve1', 'read_only', 'allowed', '{"schedule": "daily 02:00", "storage": "backup"}', '2026-11-10 02:00:00+00'),
    (NULL, 'user:alice', 'upsert_knowledge', 'knowledge/network', 'reversible_low', 'allowed', '{"key": "network/vlans"}', '2026-11-12 09:41:07+00'),
    (NULL, 'system', 'expire_approvals', 'nomos', 'reversible_low', 'allowed', '{"expired": 0}', '2026-11-30 00:00:00+00');"""


# When each migration reached this deployment: the release (migration 020) on 16 November, so
# `compare --at migration:020` splits the month into before and after the release.
MIGRATIONS_APPLIED = {1: datetime(2025, 3, 2, 10, 0, tzinfo=timezone.utc),
                      5: datetime(2025, 6, 14, 9, 30, tzinfo=timezone.utc),
                      10: datetime(2026, 2, 20, 18, 0, tzinfo=timezone.utc),
                      20: datetime(2026, 11, 16, 6, 0, tzinfo=timezone.utc)}
RELEASE = MIGRATIONS_APPLIED[20]
RELEASE_RULES = ["empty-response", "unfinished-session", "orphaned-approval", "stale-plan-steps",
                 "plan-step-order", "retired-tool"]


def migrations_sql() -> str:
    cases = " ".join(f"WHEN {v} THEN {literal(at)}" for v, at in MIGRATIONS_APPLIED.items())
    return ("-- when each migration was applied (the release, migration 020, on 16 November)\n"
            f"UPDATE schema_migrations SET applied_at = CASE version {cases} ELSE applied_at END;")


def render_sql(sessions: list[Session]) -> str:
    parts = [
        "-- The nomos-forensics sample: 36 Nomos chat sessions from a homelab, November 2026.",
        "-- GENERATED by sql/sample/generate_sample.py; edit that script, not this file.",
        "-- Load it after migrations 001..020 into an empty database (psql -f, or psycopg in one",
        "-- execute); sql/sample/README.md lists the sessions and the signatures each one shows.",
        "SET client_encoding = 'UTF8';",
        "BEGIN;",
        "",
        migrations_sql(),
        "",
    ]
    for s in sessions:
        parts.extend(session_sql(s))
        parts.append("")
    parts.append(OUTSIDE_CHAT_AUDIT)
    parts.append("")
    parts.append("COMMIT;")
    return "\n".join(parts) + "\n"


SIGNATURE_DOCS = [
    ("cant-run", "the agent claims it can't run, access or do something (\"I can't run X\"), in any language"),
    ("no-web-tool", "\"no local knowledge on that\" and no `http_get` call in the session"),
    ("empty-response", "an assistant message with no text and no tool calls (text \"\", null, missing, or content null)"),
    ("non-english-refusal", "boilerplate refusal in another language than the user's"),
    ("tool-fanout", "more than 30 tool calls in one turn, the same tool repeated"),
    ("oversized-message", "a message over 50 KB (raw tool output persisted verbatim)"),
    ("orphaned-approval", "an execution still `pending_approval` when `complete_task` was called"),
    ("plan-step-order", "a plan step ran while an earlier `seq` of its generation was still waiting"),
    ("stale-plan-steps", "an older plan generation's steps still `pending` after a newer `propose_plan`"),
    ("retired-tool", "a call to the retired `request_execution` tool"),
    ("blocked-action", "audit_log rows with outcome `blocked` or `denied`"),
    ("user-frustration", "the user repeats or corrects (\"no, I said…\", \"that's not what I asked\")"),
    ("unfinished-session", "the transcript ends with no answer: on a tool result, a user message, a blank reply or an error card"),
]
OUTCOME_SYMBOL = {"achieved": "✅ achieved", "failed": "❌ failed", "partial": "⚠️ partial"}


def _cell(text: str | None) -> str:
    if text is None:
        return "*(NULL)*"
    if text == "":
        return "*(empty)*"
    return text.replace("|", "\\|")


def render_readme(sessions: list[Session]) -> str:
    rows = [
        f"| `{s.id[:8]}` | {_cell(s.title)} | {_cell(s.model)} | {_cell(s.status)} | "
        f"{', '.join(s.signatures) or 'none'} | {OUTCOME_SYMBOL[s.outcome]} | {_cell(s.notes)} |"
        for s in sessions
    ]
    by_signature = {name: [s.id[:8] for s in sessions if name in s.signatures] for name, _ in SIGNATURE_DOCS}
    coverage = [f"| {name} | {doc} | {', '.join(f'`{p}`' for p in by_signature[name])} |"
                for name, doc in SIGNATURE_DOCS]
    early = [s for s in sessions if s.start < RELEASE]
    late = [s for s in sessions if s.start >= RELEASE]

    def rate(group: list[Session], rule: str) -> str:
        return f"{sum(rule in s.signatures for s in group)}/{len(group)}"

    release = [f"| {rule} | {rate(early, rule)} | {rate(late, rule)} |" for rule in RELEASE_RULES]
    return f"""# The sample sessions

`sample.sql` holds {len(sessions)} Nomos chat sessions from a homelab (Proxmox nodes pve1-pve3,
LXC containers for DNS, nginx, git, backups, media), created between 1 and 30 November 2026,
with their audit log, plans, plan steps and executions. `nomos-forensics demo` loads it into an
embedded Postgres and reviews `{DEMO_PREFIX}` (no other session id starts with that prefix); the
test suite loads it through `make_db(sample=True)`, and `docker-compose.yml` loads it as the last
init script.

It is generated: edit `generate_sample.py` and run `python sql/sample/generate_sample.py`,
which rewrites `sample.sql` and this file (ids are uuid5 of a fixed key, times are fixed, so the
output is the same on every run; a test checks the committed files are up to date). Load it
after migrations 001..020 into an empty database.

## Sessions

*signatures* are the rule names whose finding the session is built to show (`none`: a clean
session, no finding expected). *outcome* is the runbook's verdict (✅ / ❌ / ⚠️) a reviewer
should reach, read from how the session ends (README "How the outcome is decided"): a session
whose task was done is ✅ even when a text rule reports friction on the way (a fan-out, a
correction by the user, an early blank reply, a retired tool retried with `run`); the
finding's severity carries the friction. Sessions are listed oldest first.

| id prefix | title | model | status | signatures | outcome | notes |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}

## Before and after the release

`schema_migrations` records migration 020 (the release) as applied on
{RELEASE.strftime("%Y-%m-%d %H:%M")} UTC: {len(early)} sessions were created before it and {len(late)} after, so
`nomos-forensics compare --at migration:020` shows the release's effect on the rules it targets
(sessions with the signature / sessions in the period; too few sessions for a significant verdict):

| rule | before | after |
|---|---|---|
{chr(10).join(release)}

## Signature coverage

| rule | what the sample shows | sessions |
|---|---|---|
{chr(10).join(coverage)}

## Messy shapes the data model allows

Every one of them is in the sample, so no code path can assume the tidy shape:

- `content` double-encoded (a JSON string holding JSON) or a bare string (`{next(s.id[:8] for s in sessions if s.key == 'legacy-import')}`),
  an array of parts (`{next(s.id[:8] for s in sessions if s.key == 'logrotate-array')}`), JSON `null` (`{next(s.id[:8] for s in sessions if s.key == 'zfs-null-content')}`);
- `text` missing or `null`, `tool_calls` missing, `null` or `[]`, a tool call with no `name`,
  `arguments` as a JSON-encoded string (`{next(s.id[:8] for s in sessions if s.key == 'open-ports-nameless')}`, `{next(s.id[:8] for s in sessions if s.key == 'restore-pihole-null')}`,
  `{next(s.id[:8] for s in sessions if s.key == 'logrotate-array')}`);
- legacy `tool_results` inside the assistant message (`{next(s.id[:8] for s in sessions if s.key == 'legacy-import')}`, and `{next(s.id[:8] for s in sessions if s.key == 'big-files-120')}`,
  which is also over 50 KB);
- sessions with a NULL title, an empty title, a NULL status, a NULL model;
- Spanish, Japanese, Chinese and Russian text;
- audit_log rows with a NULL `session_id` (scheduled jobs, operator actions).

Tool results are `role = 'tool'` rows shaped `{{"tool_call_id", "name", "output", "is_error"}}`
(`output` a string or an object), except in the legacy rows above.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the files are out of date")
    parser.add_argument("--outdir", type=Path, default=HERE)
    args = parser.parse_args(argv)
    sessions = all_sessions()
    files = {"sample.sql": render_sql(sessions), "README.md": render_readme(sessions)}
    stale = []
    for name, text in files.items():
        path = args.outdir / name
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            stale.append(name)
            if not args.check:
                path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)} (run {Path(__file__).name})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
