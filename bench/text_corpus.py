"""The real-text corpus of issues 31 and 32: which messages are labelled, how families are split
into tune and locked test, batches for annotators, and their agreement.

    python bench/text_corpus.py split --seed 20261207        # once, before any rule changes
    python bench/text_corpus.py sample                       # items/replies.jsonl, items/users.jsonl
    python bench/text_corpus.py batch replies --part 3/9     # one annotator's batch of tune items, as text
    python bench/text_corpus.py batch users --double --part 1/2 --split locked   # annotators only
    python bench/text_corpus.py agreement                    # Cohen's kappa per label, disagreements
    python bench/text_corpus.py check                        # the items still match the extracted text

The texts stay out of git (bench/realcorpus/data/, made by `real_corpus.py extract`); what is
committed is which messages are items (session key and position, with a hash of the text so a
re-extraction is checked), the split and the labels. See bench/realcorpus/README.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real_corpus

HERE = real_corpus.HERE
SPLIT = HERE / "split.yaml"
ITEMS = HERE / "items"
LABELS = HERE / "labels" / "text"
UNITS = ("replies", "users")
LOCKED_SHARE = 0.4  # of each kind's families, rounded up, when the kind has two or more

# Families first used to tune the rules before this corpus (the 582-session corpus and the harness
# those runs share): they can never be locked test.
TUNED_BEFORE = {"mini-swe-agent-gemini3"}

# What the sampler looks for so that each family's sample holds the hard cases (it is not a rule:
# a third of the sample comes from messages holding one of these, whatever they turn out to be)
REFUSAL_CUES = re.compile(
    r"can'?t|cannot|unable|not able|sorry|apolog|unfortunately|won'?t|don'?t have (?:access|the ability)|"
    r"as an ai|real-time|browse|policy|guideline|inappropriate|illegal|"
    r"无法|不能|抱歉|对不起|作为|できません|申し訳|出来ません|не могу|извините|к сожалению|невозможно|"
    r"no puedo|lo siento|lamentablemente|não posso|desculpe|infelizmente|je ne peux|désolé|malheureusement|"
    r"ich kann nicht|leider|entschuldigung|할 수 없|죄송|불가능|yapamam|üzgünüm|maalesef|maaf|tidak bisa", re.I)
FRUSTRATION_CUES = re.compile(
    r"\bno\b|wrong|again|still|not work|doesn'?t work|didn'?t|why|broke|useless|stop|\?\?|!!|"
    r"不对|不是|还是|又|为什么|没有|まだ|違う|なぜ|また|не так|опять|снова|всё ещё|почему|не работает|"
    r"otra vez|de nuevo|todavía|no funciona|por qué|ainda|de novo|não funciona|por que|encore|toujours|"
    r"ne marche|pourquoi|immer noch|schon wieder|funktioniert nicht|warum|falsch|아직|다시|왜|안 돼|"
    r"hala|yine|neden|çalışmıyor|yanlış", re.I)
# items per family and unit: what a family's kind is worth to the corpus (the 582-session corpus,
# tuned on before, adds only a few of each of its families)
QUOTA = {
    "replies": {"safety-benchmark": 230, "chat-assistant": 180, "coding-agent": 45, "support-agent": 100,
                "tool-agent": 80, "ops-agent": 45, "forum-quote": 60, "before": 8},
    "users": {"safety-benchmark": 0, "chat-assistant": 120, "coding-agent": 60, "support-agent": 450,
              "tool-agent": 60, "ops-agent": 60, "forum-quote": 0, "before": 15},
}
WIDE = {"judge-capacity-mhj": 500}  # a family in many languages: more items, spread over them
CUED_SHARE = 45  # per cent of a family's items drawn from those with a cue (the hard cases)
DOUBLE_SHARE = 0.12  # of each unit's items, labelled by a second annotator


# ----------------------------------------------------------------------------- sources and split
def sources() -> list[dict[str, Any]]:
    return real_corpus.load_sources()


def family_of(source: dict[str, Any]) -> str:
    return source.get("family") or source["name"]


def kind_of(source: dict[str, Any]) -> str:
    return source.get("kind") or "coding-agent"  # the 582-session corpus: aider, SWE agents, Claude Code


def load_split() -> dict[str, Any]:
    return yaml.safe_load(SPLIT.read_text(encoding="utf-8")) if SPLIT.exists() else {"families": {}}


def split_options(parser: argparse.ArgumentParser) -> None:
    """The options every evaluation on one side of split.yaml takes (eval_text, eval_outcome,
    eval_unexplained): the admin DSN, the side, the locked test's guard, reuse of the database."""
    parser.add_argument("--dsn", required=True, help="an admin connection (the database is made on its server)")
    parser.add_argument("--split", choices=("tune", "locked"), default="tune")
    parser.add_argument("--locked-once", action="store_true", help="score the locked test (figures only)")
    parser.add_argument("--no-build", action="store_true")


def check_split(args: argparse.Namespace) -> None:
    """The locked test is scored once, at the end, and only when asked for by name."""
    if args.split == "locked" and not args.locked_once:
        raise SystemExit("the locked test is scored once, when the work is done: pass --locked-once")


SCRIPT = Path(sys.executable).with_name("nomos-forensics")


def run_scan(dsn: str, tool: Path = SCRIPT, fmt: str = "jsonl") -> str:
    """`nomos-forensics scan` of one database, its output (exit 0 or 1; anything else stops here)."""
    done = subprocess.run([str(tool), "scan", "--dsn", dsn, "--format", fmt], capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"scan failed ({done.returncode}): {done.stderr[-500:]}")
    return done.stdout


def scan_cards(dsn: str, tool: Path = SCRIPT) -> list[dict]:
    """The cards of `scan --format jsonl` of one database."""
    return [json.loads(line) for line in run_scan(dsn, tool).splitlines() if line.strip()]


def language_of(source: dict[str, Any]) -> str:
    """The source's main language (the first one its entry names)."""
    return re.split(r"[\s,/]+", str(source.get("language") or "en").strip())[0].split("-")[0].lower() or "en"


def make_split(seed: int) -> dict[str, Any]:
    """Families into tune and locked test, seeded and stratified: within each kind and main
    language that has two or more new families, LOCKED_SHARE of them (rounded up, at least one
    left to tune) are locked; the kind's families alone in their language are drawn together the
    same way. A family already in split.yaml keeps its side (a tuned family never becomes test);
    new families are drawn among themselves."""
    split = load_split()
    known = split.setdefault("families", {})
    split.setdefault("seed", seed)
    strata: dict[tuple[str, str], list[str]] = defaultdict(list)
    for source in sources():
        family = family_of(source)
        if family in known or any(family in members for members in strata.values()):
            continue
        if not source.get("family") or family in TUNED_BEFORE:
            known[family] = {"kind": kind_of(source), "language": language_of(source), "split": "tune",
                             "why": "tuned on before this corpus"}
        else:
            strata[(kind_of(source), language_of(source))].append(family)
    draws: dict[str, list[str]] = {}
    for (kind, language), families in sorted(strata.items()):
        name = f"{kind}/{language}" if len(families) >= 2 else f"{kind}/alone"
        draws.setdefault(name, []).extend(families)
    rng = random.Random(seed)
    for name, families in sorted(draws.items()):
        families = sorted(families)
        rng.shuffle(families)
        locked = min(math.ceil(len(families) * LOCKED_SHARE), len(families) - 1)
        kind = name.split("/")[0]
        for index, family in enumerate(families):
            language = next(lang for (k, lang), members in strata.items() if family in members)
            known[family] = {"kind": kind, "language": language, "split": "locked" if index < locked else "tune",
                             "why": f"seed {seed}, drawn among the {len(families)} new families of {name}"}
    split["families"] = dict(sorted(known.items()))
    return split


def write_split(split: dict[str, Any]) -> None:
    header = ("# The tune / locked-test split of the real-text corpus (bench/text_corpus.py split), by source\n"
              "# family. Locked families are never read while tuning; they are scored once, at the end.\n"
              "# A family keeps its side for good: another round adds new families.\n")
    SPLIT.write_text(header + yaml.safe_dump(split, sort_keys=False, allow_unicode=True), encoding="utf-8")


# ----------------------------------------------------------------------------- items
def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, dict):
        text = content.get("text")
        return text if isinstance(text, str) else ""
    return content if isinstance(content, str) else ""


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:16]


def _order(key: str, seed: int) -> str:
    return hashlib.sha1(f"{seed}:{key}".encode()).hexdigest()


def candidates(unit: str, data: Path) -> Iterator[dict[str, Any]]:
    """Every message of the unit's role with text, in the sources sampled for that unit."""
    # a source of whole sessions gives its replies and user messages too
    wanted = {s["name"]: s for s in sources()
              if not s.get("units") or {"replies" if unit == "replies" else "user-messages", "sessions"} & set(s["units"])}
    role = "assistant" if unit == "replies" else "user"
    for record in real_corpus.iter_records(data):
        source = wanted.get(record["provenance"]["source"])
        if source is None:
            continue
        seen_user = False
        for position, message in enumerate(record["messages"]):
            if message["role"] == "user":
                first, seen_user = not seen_user, True
            if message["role"] != role:
                continue
            text = text_of(message)
            if not text.strip():
                continue
            yield {"item": f"{record['key']}#{position}", "session": record["key"], "position": position,
                   "source": source["name"], "family": family_of(source), "kind": kind_of(source),
                   "first": role == "user" and first, "chars": len(text), "sha1": digest(text),
                   "cue": bool((REFUSAL_CUES if unit == "replies" else FRUSTRATION_CUES).search(text[:4000])),
                   "external": message.get("external"), "_text": text}


def sample(unit: str, data: Path, split: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Per family up to QUOTA items: CUED_SHARE% with a cue (the hard cases: refusals and
    the replies that only share their words; corrections and the messages that only look like
    them), the rest at random; user messages that open a session only as a few easy negatives.
    Each item's language is identified (lingua, the first 2,000 characters)."""
    from lingua import LanguageDetectorBuilder

    detector = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()

    def identify(text: str) -> str:
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found is not None else "xx"

    by_family: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in candidates(unit, data):
        item["language"] = identify(item["_text"][:2000])
        by_family[item["family"]].append(item)
    chosen: list[dict[str, Any]] = []
    for family, items in sorted(by_family.items()):
        items = _spread(sorted(items, key=lambda i: _order(i["item"], seed)))
        entry = split["families"][family]
        quota = (WIDE.get(family) if unit == "replies" else None) or \
            QUOTA[unit]["before" if entry["why"].startswith("tuned on before") else entry["kind"]]
        if not quota:
            continue
        if unit == "users":
            later = [i for i in items if not i["first"]]
            firsts = [i for i in items if i["first"]][: max(5, quota // 20)]
            items = later or firsts
            quota -= len(firsts) if later else 0
        cued = [i for i in items if i["cue"]][: quota * CUED_SHARE // 100]
        taken = {i["item"] for i in cued}
        rest = [i for i in items if i["item"] not in taken][: quota - len(cued)]
        picked = cued + rest + (firsts if unit == "users" and later else [])
        chosen.extend(picked)
    for item in chosen:
        item["split"] = split["families"][item["family"]]["split"]
    for item in chosen:  # by the item alone: resampling one family leaves the others' draws as they were
        item["double"] = int(_order(f"double:{item['item']}", seed)[:8], 16) < DOUBLE_SHARE * 0x100000000
    for item in chosen:
        item.pop("_text", None)
    return sorted(chosen, key=lambda i: (i["family"], i["item"]))


def _spread(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`items` (in their seeded order) dealt round-robin over their languages, so a family in
    several languages gives each its share."""
    by_language: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        by_language[item["language"]].append(item)
    if len(by_language) == 1:
        return items
    queues = [by_language[lang] for lang in sorted(by_language)]
    out: list[dict[str, Any]] = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop(0))
    return out


def items(unit: str) -> list[dict[str, Any]]:
    path = ITEMS / f"{unit}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_items(unit: str, chosen: list[dict[str, Any]]) -> None:
    ITEMS.mkdir(parents=True, exist_ok=True)
    # not the labels a source ships (`external`): they stay with the extracted text, out of git
    keep = ("item", "family", "kind", "split", "language", "cue", "first", "double", "chars", "sha1")
    with (ITEMS / f"{unit}.jsonl").open("w", encoding="utf-8") as handle:
        for item in chosen:
            handle.write(json.dumps({k: item[k] for k in keep if item.get(k) is not None}, ensure_ascii=False) + "\n")


# ----------------------------------------------------------------------------- batches for annotators
def _records_by_key(data: Path, keys: set[str]) -> dict[str, dict[str, Any]]:
    return {r["key"]: r for r in real_corpus.iter_records(data) if r["key"] in keys}


def _clip(text: str, keep: int) -> str:
    return text if len(text) <= keep else text[: keep * 2 // 3] + f"\n[… {len(text) - keep:,} characters left out …]\n" + text[-keep // 3:]


def batch_items(unit: str, part: tuple[int, int], double: bool, split: str | None,
                unlabelled_by: str | None = None) -> list[dict[str, Any]]:
    """The items of batch K of N: every N-th of the unit's items (those to label twice, those of
    one side of the split, those an annotator has not labelled yet), starting at the K-th."""
    chosen = [i for i in items(unit) if (i["double"] if double else True) and (split is None or i["split"] == split)]
    if unlabelled_by:
        done = load_labels(unit, unlabelled_by)
        chosen = [i for i in chosen if i["item"] not in done]
    index, count = part
    return [i for n, i in enumerate(chosen) if n % count == index - 1]


def batch(unit: str, part: tuple[int, int], double: bool, data: Path, split: str | None,
          unlabelled_by: str | None = None) -> str:
    """The items of one annotator's batch as plain text: context (the messages before, clipped),
    then the target message (up to 3,500 characters: its head and tail)."""
    chosen = batch_items(unit, part, double, split, unlabelled_by)
    records = _records_by_key(data, {i["item"].rsplit("#", 1)[0] for i in chosen})
    out = []
    for item in chosen:
        key, position = item["item"].rsplit("#", 1)
        messages = records[key]["messages"]
        target = messages[int(position)]
        if digest(text_of(target)) != item["sha1"]:
            raise SystemExit(f"{item['item']}: the extracted text changed since sampling; run `check`")
        out.append(f"=== ITEM {item['item']}")
        out.extend(_context(messages[: int(position)], unit))
        out.append(f">>> TARGET {target['role']}:\n{_clip(text_of(target), 3500)}\n")
    return "\n".join(out)


def _context(before: list[dict[str, Any]], unit: str) -> list[str]:
    """The conversation before the target, as an annotator needs it: the last four user and
    assistant messages (tool results counted, not shown), clipped; for a user message also the
    user's earlier messages in one line each (a repeat is judged against them)."""
    shown: list[str] = []
    tools = 0
    for message in reversed(before):
        if message["role"] == "tool":
            tools += 1
            continue
        if message["role"] not in ("user", "assistant") or len(shown) >= 4:
            continue
        content = message.get("content")
        calls = [c.get("name") for c in (content.get("tool_calls") or []) if isinstance(c, dict)] \
            if isinstance(content, dict) and isinstance(content.get("tool_calls"), list) else []
        text = text_of(message) or ("(no text)" if calls else json.dumps(content, ensure_ascii=False)[:300])
        header = f"--- {message['role']}{' (calls ' + ', '.join(map(str, calls)) + ')' if calls else ''}"
        if tools:
            header += f" [then {tools} tool result{'s' if tools > 1 else ''}]"
            tools = 0
        shown.append(f"{header}:\n{_clip(text, 800)}")
    lines = list(reversed(shown))
    if unit == "users":
        earlier = [" ".join(text_of(m).split())[:120] for m in before if m["role"] == "user"][:-2]
        if earlier:
            lines.insert(0, "--- the user's earlier messages (first 120 characters each):\n" + "\n".join(f"* {e}" for e in earlier[-10:]))
    return lines


VALUES = {
    "refusal": {"none", "cant-run", "no-web-tool", "policy", "business-rule"},
    "frustration": {"none", "clarify", "correct", "repeat", "complain"},
    "grade": {None, "low", "medium", "high"},
}


def label_problem(unit: str, row: dict[str, Any]) -> str | None:
    """What makes a label line break the guide's schema (section 5), or None."""
    field = "refusal" if unit == "replies" else "frustration"
    if row.get(field) not in VALUES[field]:
        return f"{field} {row.get(field)!r}"
    if unit == "replies":
        for flag in ("partial", "mention", "wrong_language"):
            if not isinstance(row.get(flag), bool):
                return f"{flag} is not true/false"
        if row["partial"] and row["refusal"] == "none":
            return "partial with refusal none"
    else:
        if row.get("grade") not in VALUES["grade"] or (row["frustration"] == "none") != (row.get("grade") is None):
            return f"grade {row.get('grade')!r} with frustration {row['frustration']}"
    return None


def progress(unit: str, part: tuple[int, int], double: bool, annotator: str, split: str | None) -> int:
    """How much of one batch is labelled (its items, in the batch's order) and which lines are
    malformed: what an annotator runs before stopping."""
    wanted = [i["item"] for i in batch_items(unit, part, double, split)]
    labels = load_labels(unit, annotator)
    missing = [item for item in wanted if item not in labels]
    bad = [(item, label_problem(unit, labels[item])) for item in wanted if item in labels and label_problem(unit, labels[item])]
    print(f"{len(wanted) - len(missing)} of {len(wanted)} labelled; {len(bad)} malformed")
    for item, problem in bad[:20]:
        print(f"malformed {item}: {problem}")
    for item in missing[:10]:
        print(f"missing {item}")
    return 0 if not missing and not bad else 1


def to_adjudicate(unit: str, split: str) -> list[dict[str, Any]]:
    """The items of one side of the split that an adjudicator reads: those the two annotators
    labelled differently, and those annotator a marked unsure."""
    first, second = load_labels(unit, "a"), load_labels(unit, "b")
    chosen = []
    for item in items(unit):
        if item["split"] != split or item["item"] not in first:
            continue
        mine, theirs = first[item["item"]], second.get(item["item"])
        differ = theirs is not None and any(mine.get(f) != theirs.get(f) for f in FIELDS[unit])
        if differ or mine.get("unsure"):
            chosen.append({**item, "a": mine, "b": theirs})
    return chosen


def adjudication_batch(unit: str, split: str, data: Path) -> str:
    """The adjudicator's batch: each item as annotators saw it, then both labels and notes."""
    chosen = to_adjudicate(unit, split)
    records = _records_by_key(data, {i["item"].rsplit("#", 1)[0] for i in chosen})
    out = []
    for item in chosen:
        key, position = item["item"].rsplit("#", 1)
        messages = records[key]["messages"]
        out.append(f"=== ITEM {item['item']}")
        out.extend(_context(messages[: int(position)], unit))
        out.append(f">>> TARGET {messages[int(position)]['role']}:\n{_clip(text_of(messages[int(position)]), 3500)}")
        for who in ("a", "b"):
            if item[who] is not None:
                shown = {k: v for k, v in item[who].items() if k != "item"}
                out.append(f"### annotator {who}: {json.dumps(shown, ensure_ascii=False)}")
        out.append("")
    return "\n".join(out)


# ----------------------------------------------------------------------------- agreement
FIELDS = {"replies": ("refusal", "partial", "mention", "wrong_language"), "users": ("frustration", "grade")}


def load_labels(unit: str, annotator: str) -> dict[str, dict[str, Any]]:
    labels = {}
    for path in sorted((LABELS / annotator).glob(f"{unit}-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                labels[row["item"]] = row
    return labels


def kappa(pairs: list[tuple[Any, Any]]) -> float | None:
    """Cohen's kappa of two annotators' values on the same items."""
    if not pairs:
        return None
    n = len(pairs)
    agree = sum(a == b for a, b in pairs) / n
    first, second = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    chance = sum(first[v] * second[v] for v in set(first) | set(second)) / (n * n)
    return 1.0 if chance == 1 else (agree - chance) / (1 - chance)


def agreement(unit: str) -> tuple[list[list[Any]], list[dict[str, Any]]]:
    first, second = load_labels(unit, "a"), load_labels(unit, "b")
    both = sorted(set(first) & set(second))
    rows, disagreements = [], []
    for field in FIELDS[unit]:
        pairs = [(first[i].get(field), second[i].get(field)) for i in both]
        value = kappa(pairs)
        rows.append([field, len(pairs), f"{sum(a == b for a, b in pairs) / len(pairs):.3f}" if pairs else "n/a",
                     f"{value:.3f}" if value is not None else "n/a"])
    for item in both:
        differ = {f: [first[item].get(f), second[item].get(f)] for f in FIELDS[unit] if first[item].get(f) != second[item].get(f)}
        if differ:
            disagreements.append({"item": item, "differ": differ})
    return rows, disagreements


# ----------------------------------------------------------------------------- main
def _part(value: str) -> tuple[int, int]:
    index, count = (int(x) for x in value.split("/"))
    if not 1 <= index <= count:
        raise argparse.ArgumentTypeError("K/N with 1 <= K <= N")
    return index, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("split", help="draw the tune / locked-test split of the families (keeps earlier draws)")
    p.add_argument("--seed", type=int, required=True)
    p = sub.add_parser("sample", help="choose the items of each unit")
    p.add_argument("--data", type=Path)
    p = sub.add_parser("batch", help="print one annotator's batch")
    p.add_argument("unit", choices=UNITS)
    p.add_argument("--part", type=_part, default=(1, 1))
    p.add_argument("--double", action="store_true", help="only the items labelled twice")
    p.add_argument("--split", choices=("tune", "locked"), default="tune",
                   help="which side of the split (locked: annotators only; whoever tunes the rules never asks for it)")
    p.add_argument("--unlabelled-by", metavar="ANNOTATOR", help="only the items this annotator has not labelled")
    p.add_argument("--data", type=Path)
    sub.add_parser("agreement", help="Cohen's kappa between annotators a and b, and their disagreements")
    p = sub.add_parser("adjudicate", help="print the adjudicator's batch: disagreements and unsure items")
    p.add_argument("unit", choices=UNITS)
    p.add_argument("--split", choices=("tune", "locked"), required=True)
    p.add_argument("--data", type=Path)
    p = sub.add_parser("progress", help="labels written per batch, and those that break the guide's schema")
    p.add_argument("unit", choices=UNITS)
    p.add_argument("--part", type=_part, default=(1, 1))
    p.add_argument("--double", action="store_true")
    p.add_argument("--annotator", default="a")
    p.add_argument("--split", choices=("tune", "locked", "both"), default="tune")
    p = sub.add_parser("check", help="every item's text is still what was sampled")
    p.add_argument("--data", type=Path)
    args = parser.parse_args(argv)
    if args.command == "split":
        write_split(make_split(args.seed))
        counts = Counter((f["kind"], f["split"]) for f in load_split()["families"].values())
        for (kind, side), n in sorted(counts.items()):
            print(f"{kind:18} {side:7} {n}")
        return 0
    if args.command == "progress":
        return progress(args.unit, args.part, args.double, args.annotator, None if args.split == "both" else args.split)
    if args.command == "agreement":
        from tabulate import tabulate

        for unit in UNITS:
            rows, disagreements = agreement(unit)
            print(f"## {unit}\n")
            print(tabulate(rows, ["label", "items labelled twice", "observed agreement", "Cohen's kappa"], tablefmt="github"))
            print(f"\n{len(disagreements)} disagreements\n")
        return 0
    data = args.data or real_corpus.find_data_dir()
    if data is None:
        print("no mapped sessions: run `real_corpus.py extract` first", file=sys.stderr)
        return 2
    if args.command == "sample":
        split = load_split()
        seed = int(split["seed"])
        for unit in UNITS:
            chosen = sample(unit, data, split, seed)
            write_items(unit, chosen)
            print(f"{unit}: {len(chosen)} items, {sum(i['split'] == 'locked' for i in chosen)} locked, "
                  f"{sum(i['double'] for i in chosen)} to label twice, {len({i['family'] for i in chosen})} families")
        return 0
    if args.command == "adjudicate":
        print(adjudication_batch(args.unit, args.split, data))
        return 0
    if args.command == "batch":
        print(batch(args.unit, args.part, args.double, data, args.split, args.unlabelled_by))
        return 0
    if args.command == "check":
        bad = 0
        for unit in UNITS:
            chosen = items(unit)
            records = _records_by_key(data, {i["item"].rsplit("#", 1)[0] for i in chosen})
            for item in chosen:
                key, position = item["item"].rsplit("#", 1)
                record = records.get(key)
                if record is None or digest(text_of(record["messages"][int(position)])) != item["sha1"]:
                    bad += 1
                    print(f"changed or missing: {item['item']}")
        print("every item matches" if not bad else f"{bad} items do not match")
        return 1 if bad else 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
