"""Text material for the synthetic Nomos database (bench/generate.py).

Two kinds of material:
- phrase pools (prompts, replies, refusals in many languages, failure phrasings), small lists of
  templates filled with random hosts, commands and numbers;
- log pools: a few megabytes of log-like lines per output kind (syslog, nginx, journal, docker,
  dmesg, apt, ps, find, kubectl, git, metrics, html), pre-escaped for JSON *and* for COPY text
  format, so that a tool output of any size is a cheap slice that compresses like real logs
  (repeated structure, varying timestamps, ids, hashes: pglz gets 2-4x, not 50x and not 1x).
"""

from __future__ import annotations

import base64
import json
import random

# --------------------------------------------------------------------------------------------
# infrastructure vocabulary

SERVICES = [
    "nginx", "postgresql", "grafana-server", "prometheus", "docker", "k3s", "redis-server",
    "rabbitmq-server", "gitea", "traefik", "minio", "jellyfin", "pihole-FTL", "vaultwarden",
    "home-assistant", "node_exporter", "cron", "ssh", "unattended-upgrades", "zfs-zed",
]
CT_NAMES = [
    "web-01", "web-02", "web-03", "db-main", "db-replica", "grafana", "prometheus", "k3s-master",
    "k3s-worker-1", "k3s-worker-2", "gitea", "nextcloud", "pihole", "jellyfin", "minio", "redis",
    "rabbitmq", "backup", "vaultwarden", "homeassistant", "traefik", "nginx-proxy", "ci-runner",
    "elastic", "kibana", "mail", "matrix", "wiki", "vpn", "monitoring", "staging-api", "prod-api",
]
NODES = ["pve1", "pve2", "pve3", "pve4"]
PKGS = [
    "libssl3", "openssl", "curl", "libcurl4", "nginx-common", "nginx", "postgresql-15",
    "postgresql-client-15", "linux-image-6.1.0-23-amd64", "systemd", "libsystemd0", "udev",
    "openssh-server", "openssh-client", "python3.11", "libpython3.11", "tzdata", "ca-certificates",
    "docker-ce", "containerd.io", "git", "vim", "rsync", "zfsutils-linux", "libc6", "libc-bin",
    "bind9-dnsutils", "libexpat1", "libxml2", "sudo", "bash", "coreutils", "gnupg", "wget",
]
PY_PKGS = ["requests", "urllib3", "django", "flask", "celery", "kombu", "sqlalchemy", "psycopg2",
           "numpy", "pandas", "jinja2", "werkzeug", "click", "boto3", "botocore", "yaml", "idna"]
API_PATHS = ["/api/v1/items", "/api/v1/users", "/api/v1/orders", "/healthz", "/metrics",
             "/api/v2/search", "/login", "/static/app.js", "/static/app.css", "/api/v1/sessions",
             "/favicon.ico", "/api/v1/reports/daily", "/graphql", "/ws"]
USER_AGENTS = ["curl/8.5.0", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
               "Prometheus/2.53.0", "Go-http-client/1.1", "python-requests/2.32.3",
               "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 Safari/605.1.15",
               "kube-probe/1.30", "Grafana/11.1.0"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
USERS = ["alice", "bob", "carol", "dave", "erin", "frank", "ops", "admin"]

COMMANDS_SMALL = [
    "df -h", "free -m", "uptime", "systemctl status {svc} --no-pager", "docker ps -a",
    "cat /etc/os-release", "ss -tlnp", "ip -br addr", "hostnamectl", "pct status {vmid}",
    "zpool status -x", "systemctl restart {svc}", "systemctl is-active {svc}",
    "curl -sI http://localhost:8080/healthz", "nginx -t", "certbot renew --dry-run",
    "pg_isready -h localhost", "docker compose ps", "cat /proc/loadavg", "lsblk",
    "du -sh /var/log", "apt list --upgradable 2>/dev/null | wc -l", "timedatectl",
    "git -C /opt/app rev-parse HEAD", "redis-cli ping", "pct config {vmid}",
]
COMMANDS_BIG = [
    ("journalctl -u {svc} --since '24 hours ago' --no-pager", "journal"),
    ("tail -n 20000 /var/log/syslog", "syslog"),
    ("cat /var/log/nginx/access.log", "nginx"),
    ("dmesg -T", "dmesg"),
    ("docker logs --since 24h {svc}", "docker"),
    ("apt-get -y dist-upgrade", "apt"),
    ("ps auxww", "ps"),
    ("find / -xdev -name '*.py' -newer /etc/hostname", "find"),
    ("kubectl get pods -A -o wide", "kubectl"),
    ("git -C /opt/app log --stat -500", "git"),
    ("cat /var/log/app/metrics.jsonl", "metrics"),
    ("journalctl -b --no-pager", "journal"),
    ("grep -r ERROR /var/log/app/", "syslog"),
]
KB_TOPICS = ["backup schedule", "nginx upstreams", "postgres replication", "k3s upgrade procedure",
             "ZFS pool layout", "TLS certificates", "container inventory", "monitoring alerts",
             "DNS records", "firewall rules", "SSO setup", "disk quotas"]

# --------------------------------------------------------------------------------------------
# conversation phrases (English unless stated)

USER_PROMPTS = [
    "Check disk usage on {target} and clean up old logs if it's above 80%.",
    "Why is nginx on {ct} returning 502 errors since this morning?",
    "Upgrade all packages on the staging containers, but don't reboot anything yet.",
    "List all running containers that use more than 2 GB of RAM.",
    "Create a backup of the postgres database on {ct} and copy it to the backup host.",
    "What's the status of the k3s cluster? Some pods seem to be crash looping.",
    "Restart grafana on {target}, the dashboards are not loading.",
    "Can you find out what is filling up /var on {ct}?",
    "Please rotate the TLS certificate for {ct}, it expires in 5 days.",
    "Set up a daily cron job on {target} that prunes docker images older than a week.",
    "The backup job failed last night. Find out why and fix it.",
    "Add a new container for the wiki, 2 cores, 4 GB RAM, Debian 12.",
    "Is redis on {ct} still replicating to the replica? Check the lag.",
    "Show me the last errors from the {svc} service on {target}.",
    "Migrate {ct} from {node} to {node2} during the maintenance window.",
    "Why is the load average on {node} so high right now?",
    "Make sure unattended-upgrades is enabled on every active container.",
    "Check which containers are stopped and tell me if any of them should be running.",
    "Open port 8443 on {ct} for the new API and update the firewall rules.",
    "Document the current backup schedule in the knowledge base.",
    "Our monitoring says {svc} on {target} is down. Investigate please.",
    "Increase the disk of {target} by 20G and grow the filesystem.",
    "Compare the nginx configs on web-01 and web-02 and tell me the differences.",
    "How much free space is left on the ZFS pool of {node}?",
    "Can you check if the postgres replica on db-replica is lagging behind?",
    "Clean up dangling docker volumes on {target}.",
    "Deploy the latest version of the api to staging and run the smoke tests.",
    "Find all containers still running Debian 11 and plan an upgrade to Debian 12.",
    "Why did the {svc} service restart 14 times in the last hour on {target}?",
    "Please check memory usage on all k3s nodes.",
]
USER_FOLLOWUPS = [
    "Thanks, that worked.", "Great, go ahead.", "Yes, approve it.", "No, I meant {target}, not that one.",
    "That didn't work, the service is still failing. Can you look again?",
    "Can you also check {ct} while you're at it?", "Ok. What about the logs?",
    "Please do it now, we're in the maintenance window.", "Hold on, don't restart anything yet.",
    "Why did it fail?", "Looks good. Please write this down in the knowledge base.",
    "Can you double-check the disk usage after the cleanup?", "Try again please.",
    "Perfect, thank you!", "Continue.", "What else do you need from me?",
    "Please summarise what you changed.", "And the other containers?",
]
USER_NO_WEB_QUESTIONS = [
    "What's the latest stable release of Proxmox VE and what changed in it?",
    "Is there a known CVE for OpenSSH 9.6 that affects our containers?",
    "What changed in PostgreSQL 17.2 compared to 17.1?",
    "How do I configure rate limiting middlewares in Traefik v3 according to the docs?",
    "What's the recommended ZFS ARC size for a 64 GB host according to the OpenZFS docs?",
    "Did Debian publish a security advisory for glibc this week?",
    "What is the current version of k3s and does it support Kubernetes 1.31?",
    "Are there breaking changes in Grafana 11 for our alerting rules?",
    "What does the error 'ERR_SSL_VERSION_OR_CIPHER_MISMATCH' mean and how is it usually fixed?",
    "Which Ubuntu LTS versions are still supported right now?",
]
USER_CANT_RUN_NEAR_MISS = [
    "I can't run docker ps on {ct} myself, the ssh key is missing. Can you do it?",
    "I cannot access {target} from my laptop, can you check it from your side?",
    "I'm unable to execute the backup script, it says permission denied. Please have a look.",
]
ASSISTANT_INTERIM = [
    "Let me check the current state first.", "I'll look at the service status and recent logs.",
    "Checking disk usage on {target}.", "Let me list the containers.",
    "I'll inspect the logs for {svc}.", "Running a quick health check.",
    "First I'll confirm which containers are affected.", "Now let me verify the fix.",
    "I'll gather the package list before upgrading.", "Looking at the nginx error log.",
]
ASSISTANT_FINAL = [
    "Done. {svc} on {target} is running again and the health check returns 200.",
    "Disk usage on /var was at {pct}%. I removed {n} rotated log files and freed {gb} GB; it's now at {pct2}%.",
    "All {n} packages on the staging containers were upgraded. No reboot was performed; {k} containers need one for the new kernel.",
    "These containers use more than 2 GB of RAM:\n\n| vmid | name | mem |\n|---|---|---|\n| {vmid} | {ct} | {gb} GB |\n| {vmid2} | web-02 | 2.4 GB |",
    "The backup of the database on {ct} completed ({gb} GB) and was copied to the backup host. Checksum verified.",
    "The 502s came from the upstream {svc} crashing after the OOM killer hit it. I raised its memory limit to 2 GB and restarted it; errors stopped at {hh}:{mm}.",
    "The cluster is healthy now: {n} pods running, the crash-looping pod was fixed by recreating its config map.",
    "/var/lib/docker was using {gb} GB, mostly dangling images. After `docker image prune -a` it uses {gb2} GB.",
    "The certificate for {ct} was renewed and nginx reloaded. New expiry: in 90 days.",
    "The cron job is in place on {target}: `0 3 * * * docker image prune -af --filter until=168h`.",
    "The backup failed because the target bucket was full. I removed backups older than 30 days and re-ran the job; it succeeded.",
    "Replication is fine: the replica is {n} bytes behind, lag under one second.",
    "Here are the last errors from {svc} on {target}:\n```\n{hh}:{mm}:12 connection refused (upstream)\n{hh}:{mm}:40 timeout after 30s\n```\nThey stopped after the restart.",
    "I proposed a plan with {k} steps for the migration. Please approve it and I'll start.",
    "The load on {node} is high because of a scrub on the ZFS pool; it will finish in about {k} hours.",
    "unattended-upgrades is now enabled on all {n} active containers.",
    "These containers are stopped: {vmid} ({ct}) and {vmid2} (old-ci). Neither has run in 30 days, so I left them stopped.",
    "Port 8443 is open on {ct} and the firewall rule is saved.",
    "I documented the backup schedule in the knowledge base under 'backup schedule'.",
    "{svc} on {target} was down because its config had a syntax error after the last deploy. I fixed line {n} and restarted it.",
    "The disk of {target} was grown by 20G and the filesystem resized; {gb} GB are free now.",
    "The ZFS pool on {node} has {gb} GB free ({pct}% used).",
    "Deployed version {ver} to staging; all {n} smoke tests passed.",
    "Everything looks good. Summary: restarted {svc}, cleaned {gb} GB of logs, no other issues found.",
]
ASSISTANT_NEAR_MISS_CAN_RUN = [
    "I can run that once you approve the plan.",
    "I can run `{cmd}` on {target} as soon as you approve step 2.",
    "Sure, I can run that for you now.",
    "I ran `{cmd}` on {target}; the unit file was not found, so the service is probably named differently.",
    "I can execute the upgrade after the maintenance window starts. Shall I schedule it?",
]
ASSISTANT_NO_WEB_WITH_FETCH = [
    "I have no local knowledge on that, let me fetch the official release notes.",
    "I don't have that in my knowledge base; I'll look it up on the web.",
    "No local knowledge about this yet. Fetching the documentation now.",
]

# --- the signatures ---------------------------------------------------------------------------
CANT_RUN = [
    "I can't run that command: I don't have shell access to {target}.",
    "I'm unable to execute commands on {target} directly.",
    "Unfortunately, I cannot run `{cmd}` because there is no action available for that.",
    "I don't have the ability to execute shell commands on your servers. You can run `{cmd}` yourself.",
    "Sorry, I can't access {target} from here.",
    "I'm not able to run commands inside containers. Please run `{cmd}` manually and paste the output.",
    "There is no available action to restart services, so I can't do that for you.",
    "I cannot execute this because I lack a tool for it.",
    "As an AI assistant, I can't directly run commands on your infrastructure.",
    "I can’t run that. The only actions I have are listing containers and proposing plans.",
    "I am not able to execute `{cmd}`: running arbitrary commands is outside what I can do.",
    "Sorry, but I cannot perform that action on {target}; I have no way to execute it.",
    "Unfortunately I'm unable to access the host's shell, so I can't check the logs myself.",
    "I can't execute `{cmd}` - I don't have permission to run commands on {node}.",
]
NO_WEB = [
    "I have no local knowledge on that.",
    "I don't have any local knowledge about {topic}.",
    "I have no information about {topic} in my knowledge base.",
    "My knowledge base has nothing on {topic}, sorry.",
    "I don't have information on the latest {topic} releases.",
    "No local knowledge on that.",
    "I have no local knowledge about this topic, so I cannot answer reliably.",
    "There is nothing about {topic} in my local knowledge, I'm afraid.",
    "I lack local knowledge on {topic}; you may want to check the official documentation.",
    "Sorry, I don't have any knowledge about that in my local notes.",
]
NO_WEB_TOPICS = ["Proxmox VE 9", "OpenSSH CVEs", "PostgreSQL 17.2", "Traefik v3 middlewares",
                 "OpenZFS ARC tuning", "Debian security advisories", "k3s releases",
                 "Grafana 11 alerting", "TLS cipher errors", "Ubuntu LTS support"]
EMPTY_CONTENTS = [
    '{"text": "", "finish_reason": "stop"}',
    '{"text": "   ", "finish_reason": "stop"}',
    '{"text": "\\n\\n", "finish_reason": "stop"}',
    '{"text": null, "finish_reason": "stop"}',
    '{"finish_reason": "stop"}',
    '{"text": "", "tool_calls": [], "finish_reason": "stop"}',
    '{"text": "", "tool_calls": null}',
    '{"text": "", "error": "model returned an empty completion (attempt 3/3)", "finish_reason": "error"}',
    '{"text": " ", "tool_calls": [], "finish_reason": "length"}',
]
# Boilerplate refusals (and a few plain answers) in another language than the English user's.
FOREIGN_REPLIES = {
    "zh": ["抱歉，我无法完成这个请求。作为人工智能助手，我没有权限执行该操作。如果您有其他问题，请随时告诉我。",
           "对不起，我不能帮助您处理此请求。请检查您的配置后再试一次。",
           "很抱歉，我目前无法访问该系统，因此无法执行您要求的操作。",
           "容器正在运行，磁盘使用率为百分之四十三，没有发现任何错误。"],
    "es": ["Lo siento, pero no puedo ayudarte con esa solicitud. Como asistente, no tengo acceso a ese sistema. Si tienes otra pregunta, estaré encantado de ayudarte.",
           "Lo siento, no puedo realizar esa acción en este momento. Por favor, inténtalo de nuevo más tarde.",
           "El contenedor está funcionando correctamente y el uso del disco es del cuarenta por ciento."],
    "ru": ["Извините, но я не могу выполнить этот запрос. У меня нет доступа к этой системе. Если у вас есть другие вопросы, я с радостью помогу.",
           "К сожалению, я не могу помочь с этим запросом. Пожалуйста, попробуйте позже.",
           "Контейнер работает нормально, использование диска составляет сорок процентов."],
    "ja": ["申し訳ありませんが、そのリクエストにはお応えできません。このシステムへのアクセス権がありません。"],
    "ko": ["죄송하지만 해당 요청을 처리할 수 없습니다. 이 시스템에 접근할 권한이 없습니다."],
    "de": ["Es tut mir leid, aber ich kann diese Anfrage nicht bearbeiten. Ich habe keinen Zugriff auf dieses System."],
    "fr": ["Je suis désolé, mais je ne peux pas traiter cette demande. Je n'ai pas accès à ce système."],
    "pt": ["Desculpe, mas não posso ajudar com essa solicitação. Não tenho acesso a esse sistema."],
    "it": ["Mi dispiace, ma non posso aiutarti con questa richiesta. Non ho accesso a questo sistema."],
    "ar": ["عذرًا، لا أستطيع تنفيذ هذا الطلب. ليس لدي صلاحية الوصول إلى هذا النظام."],
    "hi": ["क्षमा करें, मैं इस अनुरोध को पूरा नहीं कर सकता। मेरे पास इस सिस्टम तक पहुंच नहीं है।"],
}
FOREIGN_WEIGHTS = {"zh": 30, "es": 18, "ru": 18, "ja": 6, "ko": 5, "de": 6, "fr": 6, "pt": 5,
                   "it": 3, "ar": 2, "hi": 1}
# Sessions whose user writes another language, answered in that language (not a finding).
LOCAL_LANG = {
    "es": (["Revisa el uso del disco en {target} y limpia los registros antiguos, por favor.",
            "¿Por qué nginx en {ct} devuelve errores 502 desde esta mañana?",
            "Reinicia grafana en {target}, los paneles no cargan.",
            "Gracias, ahora funciona correctamente."],
           ["Listo. El servicio {svc} en {target} vuelve a funcionar y la comprobación de salud devuelve 200.",
            "El uso del disco en /var era del {pct} por ciento. Eliminé {n} archivos de registro antiguos y ahora está al {pct2} por ciento.",
            "Los errores 502 venían del servicio {svc}, que se quedaba sin memoria. Aumenté el límite y lo reinicié."]),
    "de": (["Prüfe bitte die Festplattennutzung auf {target} und lösche alte Logdateien.",
            "Warum liefert nginx auf {ct} seit heute Morgen 502-Fehler?",
            "Starte grafana auf {target} neu, die Dashboards laden nicht.",
            "Danke, jetzt funktioniert es."],
           ["Erledigt. Der Dienst {svc} auf {target} läuft wieder und der Health-Check liefert 200.",
            "Die Festplattennutzung auf /var lag bei {pct} Prozent. Ich habe {n} alte Logdateien gelöscht, jetzt sind es {pct2} Prozent.",
            "Die 502-Fehler kamen vom Dienst {svc}, dem der Speicher ausging. Ich habe das Limit erhöht und ihn neu gestartet."]),
    "fr": (["Vérifie l'utilisation du disque sur {target} et supprime les anciens journaux, s'il te plaît.",
            "Pourquoi nginx sur {ct} renvoie des erreurs 502 depuis ce matin ?",
            "Redémarre grafana sur {target}, les tableaux de bord ne se chargent pas.",
            "Merci, ça marche maintenant."],
           ["C'est fait. Le service {svc} sur {target} fonctionne de nouveau et le contrôle de santé renvoie 200.",
            "L'utilisation du disque sur /var était de {pct} pour cent. J'ai supprimé {n} anciens fichiers journaux, elle est maintenant de {pct2} pour cent.",
            "Les erreurs 502 venaient du service {svc} qui manquait de mémoire. J'ai augmenté la limite et je l'ai redémarré."]),
    "pt": (["Verifique o uso do disco em {target} e limpe os registros antigos, por favor.",
            "Por que o nginx em {ct} está retornando erros 502 desde hoje de manhã?",
            "Obrigado, agora está funcionando."],
           ["Pronto. O serviço {svc} em {target} está funcionando novamente e a verificação de saúde retorna 200.",
            "O uso do disco em /var estava em {pct} por cento. Removi {n} arquivos de registro antigos e agora está em {pct2} por cento."]),
    "zh": (["请检查 {target} 的磁盘使用情况，如果超过百分之八十就清理旧日志。",
            "为什么 {ct} 上的 nginx 从今天早上开始返回 502 错误？",
            "谢谢，现在正常了。"],
           ["完成了。{target} 上的 {svc} 服务已经恢复运行，健康检查返回 200。",
            "/var 的磁盘使用率原来是百分之{pct}。我删除了 {n} 个旧日志文件，现在是百分之{pct2}。"]),
    "ru": (["Проверь, пожалуйста, использование диска на {target} и удали старые логи.",
            "Почему nginx на {ct} с утра возвращает ошибки 502?",
            "Спасибо, теперь всё работает."],
           ["Готово. Сервис {svc} на {target} снова работает, проверка состояния возвращает 200.",
            "Использование диска в /var было {pct} процентов. Я удалил {n} старых файлов журналов, теперь {pct2} процентов."]),
}
SYSTEM_PRELUDE = (
    "You are Nomos, an operations agent for a Proxmox homelab. Follow SOUL.md. Tools: run (any "
    "shell command on a target; the only mutation path), list_lxcs (bulk listing with a state "
    "filter), propose_plan (multi-step changes need approval), complete_task (call when done; "
    "write back what you learned with upsert_knowledge first), upsert_knowledge{web}. Prefer bulk "
    "tools over one call per container. Never claim you cannot run a command: use run. "
    "Destructive actions need an approved plan. Answer in the user's language."
)
SYSTEM_NOTES = [
    "Plan step {k} approved by user:{user}.", "Approval for `{cmd}` on {target} expired.",
    "Session resumed after reconnect.", "Execution {n} cancelled by complete_task.",
    "Context truncated: {n} earlier tool outputs summarised.",
]

MODELS = [("gemini-2.5-flash", 30), ("gemini-2.5-pro", 13), ("gemini-2.0-flash", 10),
          ("claude-sonnet-4", 14), ("gpt-4.1", 10), ("gpt-4.1-mini", 8), ("qwen3-32b", 5),
          ("llama-3.3-70b", 4), (None, 6)]
FLASH_TIER = {"gemini-2.5-flash", "gemini-2.0-flash", "gpt-4.1-mini", "qwen3-32b"}


def fill(template: str, r: random.Random) -> str:
    """Fill {placeholders} that occur in `template` with random infrastructure values."""
    if "{" not in template:
        return template
    vmid = r.randint(100, 199)
    values = {
        "target": f"lxc/{vmid}" if r.random() < 0.7 else r.choice(NODES),
        "ct": r.choice(CT_NAMES), "svc": r.choice(SERVICES), "node": r.choice(NODES),
        "node2": r.choice(NODES), "vmid": vmid, "vmid2": r.randint(100, 199),
        "pct": r.randint(81, 97), "pct2": r.randint(35, 70), "n": r.randint(2, 400),
        "k": r.randint(2, 7), "gb": round(r.uniform(0.5, 60), 1), "gb2": round(r.uniform(0.5, 9), 1),
        "hh": f"{r.randint(0, 23):02d}", "mm": f"{r.randint(0, 59):02d}",
        "ver": f"{r.randint(1, 4)}.{r.randint(0, 30)}.{r.randint(0, 9)}",
        "topic": r.choice(NO_WEB_TOPICS), "user": r.choice(USERS),
        "cmd": fill(r.choice(COMMANDS_SMALL), r) if "{cmd}" in template else "",
    }
    return template.format(**values)


# --------------------------------------------------------------------------------------------
# log pools


def _hex(r: random.Random, n: int) -> str:
    return f"{r.getrandbits(4 * n):0{n}x}"


class _Clock:
    def __init__(self, r: random.Random) -> None:
        self.t = 1_775_000_000.0 + r.uniform(0, 8_000_000)
        self.r = r

    def tick(self) -> float:
        self.t += self.r.expovariate(1 / 0.8)
        return self.t

    def parts(self):
        import time as _t
        tm = _t.gmtime(self.tick())
        return tm, int((self.t % 1) * 1_000_000)


def _line_syslog(r, c):
    tm, us = c.parts()
    host = r.choice(CT_NAMES)
    k = r.random()
    if k < 0.18:
        msg = f"systemd[1]: {r.choice(SERVICES)}.service: Deactivated successfully."
    elif k < 0.3:
        msg = f"CRON[{r.randint(1000, 99999)}]: (root) CMD (/usr/local/bin/backup.sh --target s3://backups/{host} >/dev/null 2>&1)"
    elif k < 0.42:
        msg = (f"sshd[{r.randint(1000, 99999)}]: Accepted publickey for root from 10.0.{r.randint(0, 9)}.{r.randint(2, 254)} "
               f"port {r.randint(30000, 65000)} ssh2: ED25519 SHA256:{base64.b64encode(r.randbytes(18)).decode()}")
    elif k < 0.55:
        msg = (f"app[{r.randint(100, 9999)}]: level={r.choice(['info', 'info', 'info', 'warn', 'error'])} "
               f"request_id={_hex(r, 16)} method={r.choice(['GET', 'GET', 'POST', 'PUT'])} path={r.choice(API_PATHS)}/{r.randint(1, 99999)} "
               f"status={r.choice([200, 200, 200, 201, 204, 304, 404, 500, 502])} duration_ms={r.randint(1, 2500)}")
    elif k < 0.65:
        msg = (f"postgres[{r.randint(100, 9999)}]: [{r.randint(1, 9)}-1] LOG:  checkpoint complete: wrote {r.randint(10, 9000)} buffers "
               f"({r.uniform(0, 30):.1f}%); 0 WAL file(s) added, {r.randint(0, 3)} removed, {r.randint(0, 9)} recycled; "
               f"write={r.uniform(0, 30):.3f} s, sync={r.uniform(0, 1):.3f} s, total={r.uniform(0, 31):.3f} s")
    elif k < 0.75:
        msg = (f"kernel: [{r.uniform(100, 9_999_999):.6f}] audit: type=1400 audit({c.t:.3f}:{r.randint(1, 999)}): apparmor=\"DENIED\" "
               f"operation=\"mount\" profile=\"lxc-{r.randint(100, 199)}_</var/lib/lxc>\" name=\"/run/systemd/unit-root/\" "
               f"pid={r.randint(1000, 99999)} comm=\"(networkd)\" flags=\"rw, rslave\"")
    elif k < 0.87:
        msg = f"systemd[1]: Started Session {r.randint(1, 99999)} of user root."
    else:
        msg = (f"{r.choice(SERVICES)}[{r.randint(100, 9999)}]: ERROR connection to upstream 10.0.{r.randint(0, 9)}.{r.randint(2, 254)}:"
               f"{r.choice([5432, 6379, 8080, 9090, 3000])} failed: {r.choice(['timeout', 'connection refused', 'no route to host'])} "
               f"(attempt {r.randint(1, 5)}/5)")
    return f"{MONTHS[tm.tm_mon - 1]} {tm.tm_mday:2d} {tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d} {host} {msg}"


def _line_nginx(r, c):
    tm, _ = c.parts()
    return (f"10.0.{r.randint(0, 9)}.{r.randint(2, 254)} - - [{tm.tm_mday:02d}/{MONTHS[tm.tm_mon - 1]}/{tm.tm_year}:"
            f"{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d} +0000] \"{r.choice(['GET', 'GET', 'GET', 'POST'])} "
            f"{r.choice(API_PATHS)}?page={r.randint(1, 50)}&id={r.randint(1, 99999)} HTTP/1.1\" "
            f"{r.choice([200, 200, 200, 200, 304, 404, 499, 502])} {r.randint(0, 90000)} \"-\" \"{r.choice(USER_AGENTS)}\" "
            f"rt={r.uniform(0, 3):.3f} uct=\"{r.uniform(0, 0.01):.3f}\" rid={_hex(r, 8)}")


def _line_journal(r, c):
    tm, us = c.parts()
    svc = r.choice(SERVICES)
    msg = r.choice([
        f"{svc}.service: Main process exited, code=exited, status={r.randint(1, 2)}/FAILURE",
        f"{svc}.service: Failed with result 'exit-code'.",
        f"Started {svc}.service - {svc} daemon.",
        f"{svc}.service: Scheduled restart job, restart counter is at {r.randint(1, 40)}.",
        f"{svc}.service: Consumed {r.uniform(0, 90):.3f}s CPU time, {r.randint(1, 900)}.{r.randint(0, 9)}M memory peak.",
        f"worker {r.randint(1, 16)} handled {r.randint(1, 5000)} requests in {r.randint(1, 60000)}ms (queue={r.randint(0, 99)})",
        f"GC pause {r.uniform(0, 90):.2f}ms heap={r.randint(50, 4000)}MB objects={r.randint(10000, 9999999)}",
    ])
    return (f"{tm.tm_year}-{tm.tm_mon:02d}-{tm.tm_mday:02d}T{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}.{us:06d}+00:00 "
            f"{r.choice(CT_NAMES)} {svc}[{r.randint(100, 99999)}]: {msg}")


def _line_docker(r, c):
    tm, us = c.parts()
    iso = f"{tm.tm_year}-{tm.tm_mon:02d}-{tm.tm_mday:02d}T{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}.{us:06d}Z"
    inner = r.choice([
        f"{iso} INFO  [worker-{r.randint(1, 8)}] processed job {_hex(r, 12)} in {r.randint(1, 9000)}ms trace={_hex(r, 16)}",
        f"{iso} WARN  [scheduler] job queue backlog={r.randint(0, 5000)} (threshold 1000)",
        f"{iso} ERROR [db] could not obtain connection from pool (active={r.randint(10, 50)}, idle=0, waiting={r.randint(1, 90)})",
        f"{iso} DEBUG [http] {r.choice(['GET', 'POST'])} {r.choice(API_PATHS)}/{r.randint(1, 99999)} -> {r.choice([200, 200, 201, 404, 500])} ({r.randint(1, 900)}ms) req={_hex(r, 12)}",
    ])
    return json.dumps({"log": inner, "stream": r.choice(["stdout", "stdout", "stderr"]), "time": iso})


def _line_dmesg(r, c):
    tm, _ = c.parts()
    dev = r.choice(["sda", "sdb", "nvme0n1", "dm-3", "zd16", "loop4"])
    msg = r.choice([
        f"EXT4-fs ({dev}): mounted filesystem {_hex(r, 8)}-{_hex(r, 4)} r/w with ordered data mode. Quota mode: none.",
        f"fwbr{r.randint(100, 199)}i0: port {r.randint(1, 3)}(veth{r.randint(100, 199)}i0) entered forwarding state",
        f"Memory cgroup out of memory: Killed process {r.randint(1000, 99999)} ({r.choice(SERVICES)}) total-vm:{r.randint(100000, 9000000)}kB, anon-rss:{r.randint(10000, 2000000)}kB, file-rss:0kB, shmem-rss:0kB, UID:{r.randint(0, 100000)} pgtables:{r.randint(100, 9000)}kB oom_score_adj:0",
        f"audit: type=1400 apparmor=\"DENIED\" operation=\"open\" profile=\"lxc-container-default-cgns\" name=\"/proc/{r.randint(1, 9999)}/mountinfo\"",
        "nf_conntrack: table full, dropping packet",
        f"{dev}: p{r.randint(1, 4)} size {r.randint(1000000, 999999999)} extends beyond EOD, truncated",
    ])
    return (f"[{tm.tm_year}-{tm.tm_mon:02d}-{tm.tm_mday:02d} {tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}] "
            f"[{r.uniform(100, 9_999_999):.6f}] {msg}")


def _line_apt(r, c):
    pkg = r.choice(PKGS)
    ver = f"{r.randint(1, 9)}.{r.randint(0, 40)}.{r.randint(0, 20)}-{r.randint(1, 9)}+deb12u{r.randint(1, 9)}"
    return r.choice([
        f"Get:{r.randint(1, 400)} http://deb.debian.org/debian bookworm/main amd64 {pkg} amd64 {ver} [{r.randint(10, 90000)} kB]",
        f"Get:{r.randint(1, 400)} http://security.debian.org/debian-security bookworm-security/main amd64 {pkg} amd64 {ver} [{r.randint(10, 9000)} kB]",
        f"Preparing to unpack .../{r.randint(0, 99):02d}-{pkg}_{ver}_amd64.deb ...",
        f"Unpacking {pkg}:amd64 ({ver}) over ({ver[:-1]}{r.randint(0, 9)}) ...",
        f"Setting up {pkg}:amd64 ({ver}) ...",
        f"Processing triggers for {r.choice(['man-db', 'libc-bin', 'systemd', 'initramfs-tools'])} ({r.randint(200, 300)}-{r.randint(1, 9)}) ...",
        f"(Reading database ... {r.randint(30000, 90000)} files and directories currently installed.)",
    ])


def _line_ps(r, c):
    return (f"{r.choice(['root', 'root', 'www-data', 'postgres', 'nobody', '100000'])} {r.randint(1, 999999):>7} "
            f"{r.uniform(0, 99):4.1f} {r.uniform(0, 40):4.1f} {r.randint(1000, 9999999):>8} {r.randint(100, 999999):>7} ?        "
            f"{r.choice(['Ss', 'S', 'Sl', 'R', 'D', 'I<'])}   {r.randint(0, 23):02d}:{r.randint(0, 59):02d}   "
            f"{r.randint(0, 999)}:{r.randint(0, 59):02d} /usr/{r.choice(['sbin', 'bin', 'lib/postgresql/15/bin'])}/"
            f"{r.choice(SERVICES)} {r.choice(['-D /var/lib/postgresql/15/main', '--config /etc/app.yaml', '-g daemon off;', '', '--port ' + str(r.randint(1000, 9999))])}")


def _line_find(r, c):
    return (f"/var/lib/docker/overlay2/{_hex(r, 64)}/diff/usr/lib/python3.11/site-packages/"
            f"{r.choice(PY_PKGS)}/{r.choice(['', 'contrib/', 'utils/', 'backends/', 'tests/'])}"
            f"{r.choice(['__init__', 'core', 'utils', 'models', 'compat', 'client', 'base', 'exceptions'])}"
            f"{r.choice(['', '_' + str(r.randint(1, 99))])}.py")


def _line_kubectl(r, c):
    ns = r.choice(["default", "kube-system", "monitoring", "apps", "ingress-nginx", "cert-manager"])
    app = r.choice(["api", "web", "worker", "coredns", "metrics-server", "traefik", "prometheus", "loki"])
    return (f"{ns:<16}{app}-{_hex(r, 10)}-{_hex(r, 5):<8}  {r.choice(['1/1', '1/1', '1/1', '0/1', '2/2'])}     "
            f"{r.choice(['Running', 'Running', 'Running', 'CrashLoopBackOff', 'Pending', 'Completed'])}   "
            f"{r.randint(0, 300)} ({r.randint(1, 59)}m ago)   {r.randint(1, 200)}d   10.42.{r.randint(0, 3)}.{r.randint(2, 254)}   "
            f"k3s-worker-{r.randint(1, 3)}   <none>           <none>")


def _line_git(r, c):
    tm, _ = c.parts()
    words = ["fix", "add", "update", "refactor", "remove", "bump", "handle", "retry", "cache", "log",
             "config", "timeout", "migration", "endpoint", "test", "docs", "deps", "session", "store"]
    subj = " ".join(r.choice(words) for _ in range(r.randint(3, 8)))
    return (f"commit {_hex(r, 40)}\nAuthor: {r.choice(USERS)} <{r.choice(USERS)}@example.org>\n"
            f"Date:   {tm.tm_year}-{tm.tm_mon:02d}-{tm.tm_mday:02d} {tm.tm_hour:02d}:{tm.tm_min:02d}\n\n    {subj}\n\n"
            f" {r.choice(['cmd/nomos/agent.go', 'cmd/nomos/store.go', 'internal/mcp/server.go', 'web/src/lib/api.ts'])} | "
            f"{r.randint(1, 300)} {'+' * r.randint(1, 20)}{'-' * r.randint(0, 10)}")


def _line_metrics(r, c):
    tm, us = c.parts()
    return json.dumps({
        "ts": f"{tm.tm_year}-{tm.tm_mon:02d}-{tm.tm_mday:02d}T{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}Z",
        "host": r.choice(CT_NAMES), "cpu": round(r.uniform(0, 100), 1), "mem_mb": r.randint(50, 16000),
        "load1": round(r.uniform(0, 8), 2), "disk_used_pct": r.randint(10, 99),
        "net_rx_bytes": r.randint(0, 10**10), "net_tx_bytes": r.randint(0, 10**10),
    })


_HTML_WORDS = ("the release notes describe new features fixes and known issues for this version including "
               "storage network cluster backup replication kernel upgrade security advisory configuration "
               "container virtual machine api documentation performance improvements deprecated removed "
               "option default behaviour changed migration guide compatibility support lifecycle").split()


def _line_html(r, c):
    words = " ".join(r.choice(_HTML_WORDS) for _ in range(r.randint(8, 30)))
    return r.choice([
        f"<p>{words.capitalize()}.</p>",
        f"<li><a href=\"/docs/{r.choice(_HTML_WORDS)}/{r.randint(1, 999)}\">{words[:40]}</a></li>",
        f"<div class=\"{r.choice(['content', 'sidebar', 'note', 'warning'])}\" id=\"s{_hex(r, 6)}\">{words}</div>",
        f"<h{r.randint(2, 4)}>{words[:50].title()}</h2>",
        f"<script src=\"/assets/{_hex(r, 20)}.js\" integrity=\"sha384-{base64.b64encode(r.randbytes(36)).decode()}\"></script>",
    ])


LOG_KINDS = {
    "syslog": _line_syslog, "nginx": _line_nginx, "journal": _line_journal, "docker": _line_docker,
    "dmesg": _line_dmesg, "apt": _line_apt, "ps": _line_ps, "find": _line_find,
    "kubectl": _line_kubectl, "git": _line_git, "metrics": _line_metrics, "html": _line_html,
}

# In COPY text format a JSON "\n" escape is written as "\\n" (the backslash doubled).
COPY_NL = "\\\\n"


class LogPools:
    """Per-kind pools of log text, pre-escaped for a JSON string *inside* a COPY text field."""

    def __init__(self, r: random.Random, bytes_per_kind: int) -> None:
        self.pools: dict[str, str] = {}
        for kind, fn in LOG_KINDS.items():
            clock = _Clock(r)
            lines, size = [], 0
            while size < bytes_per_kind:
                line = fn(r, clock)
                size += len(line) + 1
                lines.append(line)
            text = "\n".join(lines)
            assert "\\" not in text and "\t" not in text  # slicing relies on it
            # JSON-escape (without the quotes), then escape backslashes for COPY.
            self.pools[kind] = json.dumps(text, ensure_ascii=False)[1:-1].replace("\\", "\\\\")

    def slice(self, r: random.Random, kind: str, nbytes: int) -> str:
        """About `nbytes` of whole lines from `kind`, as COPY-escaped JSON string content."""
        pool = self.pools[kind]
        n = len(pool)
        parts, got = [], 0
        while got < nbytes:
            start = r.randrange(n)
            i = pool.find(COPY_NL, start)
            start = 0 if i < 0 else i + len(COPY_NL)
            want = min(nbytes - got, n - start)
            end = pool.find(COPY_NL, start + want) if want > 0 else start
            if end < 0:
                end = n
            if end <= start:
                continue
            parts.append(pool[start:end])
            got += end - start
        return COPY_NL.join(parts)
