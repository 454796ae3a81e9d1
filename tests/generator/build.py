# ruff: noqa: E501 - templates of generated source lines and prose, kept one per line
"""Build one recorded incident from a seed: repository history, Sentry recordings, ground truth.

The history is written with ``git fast-import`` (one process per incident) from trees rendered
in memory, so the lines the frames and ``expected.json`` name are read from the same rendering
that was committed.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.generator import sentry
from tests.generator.faults import KINDS
from tests.generator.langs import LANGS, Line
from tests.generator.program import Names, Plan, Program, State

LANG_KEYS = ("java", "kt", "py", "js", "ts", "go", "rb", "php")
POSITION_WEIGHTS = {
    "crash": 12,
    "above": 18,
    "caller": 18,
    "callee": 18,
    "producer": 20,
    "config": 14,
    "binding": 14,
    "schema": 10,
}
DOMAINS = [
    ("invoice", "invoices", "billing"),
    ("order", "orders", "checkout"),
    ("shipment", "shipments", "shipping"),
    ("booking", "bookings", "reservations"),
    ("payout", "payouts", "payments"),
    ("refund", "refunds", "returns"),
    ("quote", "quotes", "pricing"),
    ("claim", "claims", "insurance"),
    ("delivery_note", "delivery_notes", "logistics"),
    ("purchase_order", "purchase_orders", "procurement"),
]
ORGS = ["acme", "northwind", "globex", "initech", "umbrella", "hooli", "vandelay", "soylent"]
PEOPLE = [
    ("Ana García", "ana.garcia"),
    ("Tom Becker", "tom.becker"),
    ("Priya Nair", "priya.nair"),
    ("Lucas Martin", "lucas.martin"),
    ("Mei Chen", "mei.chen"),
    ("Jonas Berg", "jonas.berg"),
    ("Sara Rossi", "sara.rossi"),
    ("Diego López", "diego.lopez"),
]


@dataclass
class Commit:
    message: str
    author: tuple[str, str]
    date: datetime
    state: State
    role: str = ""  # fault | release | decoy | base
    sha: str = ""
    extra_files: dict[str, str] = field(default_factory=dict)


@dataclass
class Meta:
    """What the generator chose, kept beside the incident to explain a miss."""

    seed: int
    lang: str
    kind: str
    position: str
    entry: str
    chained: bool
    suppressed: bool
    truncated: bool
    early_release: bool
    question_lang: str
    contract: str  # where the contract is: docs, readme, none
    decoys: list[str]
    recovered: bool = False  # Go: the panic was recovered by a deferred handler and reported
    rewrite: bool = False  # a commit newer than the fault rewrote the crash line (same value)


def make_plan(seed: int) -> tuple[Plan, random.Random]:
    rng = random.Random(seed)
    lang = LANG_KEYS[seed % len(LANG_KEYS)]
    positions = list(POSITION_WEIGHTS)
    position = rng.choices(positions, weights=[POSITION_WEIGHTS[p] for p in positions])[0]
    kinds = sorted(k.name for k in KINDS.values() if position in k.positions)
    kind = rng.choice(kinds)
    s, p, pkg = rng.choice(DOMAINS)
    org = rng.choice(ORGS)
    names = Names(s, p, pkg, org, f"{p.replace('_', '-')}-service")
    entry = rng.choices(["web", "job", "cli"], weights=[5, 3, 2])[0]
    plan = Plan(
        seed=seed,
        lang=lang,
        kind=kind,
        position=position,
        entry=entry,
        chained=lang != "go" and rng.random() < 0.25,
        truncated=rng.random() < 0.1,
        question_lang="es" if rng.random() < 0.35 else "en",
        names=names,
        contract=rng.random() < 0.7,
        caller_inline=rng.random() < 0.5,
        filler=rng.randint(1, 3),
        dflt=rng.choice(["EU", "US", "APAC"]),
    )
    extra = random.Random(seed * 7 + 1)  # later choices, drawn apart so earlier seeds keep theirs
    plan.suppressed = plan.chained and extra.random() < 0.4
    plan.contract_in_readme = plan.contract and extra.random() < 0.15
    plan.recovered = lang == "go" and entry in ("web", "job") and extra.random() < 0.5
    # (not when the re-raise drops its cause: the crash recorded is then the re-raise line,
    rewrite = position in ("caller", "above", "binding") and extra.random() < 0.45
    # nor when the crash line is a library helper's panic (Go's date parsing), not the sink)
    plan.rewrite = rewrite and not plan.suppressed and (lang, kind) != ("go", "format_changed")
    return plan, rng


def generate(seed: int, out: Path) -> Path:
    """Write the incident of ``seed`` into ``out`` (a scenario folder) and return it."""
    plan, rng = make_plan(seed)
    prog = Program(plan)
    now = datetime(2026, 9, 1, 15, 0, tzinfo=UTC) + timedelta(
        days=seed % 90, minutes=rng.randint(0, 300)
    )
    commits, early, decoys = _history(prog, rng, now)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    trees = [_render(prog, c.state, c.extra_files) for c in commits]
    _write_git(commits, trees, out / "repo.bundle")
    release = next(i for i in range(len(commits) - 1, -1, -1) if commits[i].role == "release")
    releases = [i for i, c in enumerate(commits) if c.role == "release"]
    meta = Meta(
        seed,
        plan.lang,
        plan.kind,
        plan.position,
        plan.entry,
        plan.chained,
        plan.suppressed,
        plan.truncated,
        early is not None,
        plan.question_lang,
        "readme" if plan.contract_in_readme else "docs" if plan.contract else "none",
        decoys,
        plan.recovered,
        plan.rewrite,
    )
    _write_sentry(prog, rng, commits, trees, release, releases, early, now, out, meta)
    return out


# --- history ---------------------------------------------------------------------------


def _history(prog: Program, rng: random.Random, now: datetime):
    plan, n = prog.plan, prog.names if hasattr(prog, "names") else prog.n
    people = rng.sample(PEOPLE, 4)
    domain = n.domain if hasattr(n, "domain") else n.p.replace("_", " ")
    commits: list[Commit] = []
    decoys: list[str] = []
    st = State()
    t = now - timedelta(days=rng.randint(35, 60))

    def add(message: str, role: str, hours: float, who: int | None = None) -> None:
        nonlocal t, st
        t = t + timedelta(hours=hours)
        author = people[who if who is not None else rng.randrange(len(people))]
        commits.append(Commit(message, author, t, st.copy(), role))

    if plan.truncated:
        st.bad = True
        st.changelog.append("Imported from the previous repository")
        add(
            f"Import {n.app} from the legacy repository\n\nHistory before this point was squashed "
            "during the migration to the new Git host.",
            "base",
            0,
        )
    else:
        st.changelog.append("First version")
        add(f"{domain.capitalize()} service: first version", "base", 0)
        # Older decoys: the crashing stack's files change long before the fault.
        st.refactored = True
        st.extras.setdefault("calc", []).append(f"describe_{n.s}")
        add(
            rng.choice(
                [
                    f"Refactor {domain} results: name the result field",
                    f"Rename the {domain} calculation result",
                    "Fix result naming in the calculations",
                ]
            ),
            "decoy",
            rng.randint(30, 120),
        )
        decoys.append("older-refactor-of-stack-lines")
        st.extras.setdefault("helper", []).append(f"format_{n.s}_reference")
        st.doc_notes.setdefault("operations", []).append("Logs are kept for 30 days.")
        add("Add reference formatting and operations notes", "decoy", rng.randint(20, 90))
        decoys.append("older-multi-file")
    st.version = "1.4.0"
    st.changelog.append("1.4.0")
    add("Release 1.4.0", "release", rng.randint(24, 72))
    st.comments.setdefault("service", []).append(
        f"one {n.s.replace('_', ' ')} at a time; batching is done upstream"
    )
    add(f"Document why {domain} are processed one at a time", "decoy", rng.randint(5, 30))
    decoys.append("comment-in-caller-before-fault")

    early_index = None
    if not plan.truncated:
        st.bad = True
        st.changelog.append(_fault_note(prog))
        if rng.random() < 0.6:  # a multi-file fault commit
            st.doc_notes.setdefault("operations", []).append(
                f"The {domain} endpoint logs one line per record."
            )
            st.extras.setdefault("builder", []).append(f"{n.s}_summary")
            decoys.append("multi-file-fault-commit")
        add(_fault_message(prog, rng), "fault", rng.randint(24, 96))
    early = rng.random() < 0.3 and not plan.truncated
    if early:
        st.version = "1.5.0"
        st.changelog.append("1.5.0")
        add("Release 1.5.0", "release", rng.randint(3, 20))
        early_index = len(commits) - 1
    # Newer decoys, after the fault, touching the stack's files.
    if plan.position == "binding":  # the crashing function changes later than the fault
        st.calc_log = True
        add(
            rng.choice(
                [
                    f"Log the {domain} being computed",
                    f"Trace {domain} calculations",
                    "More logging around the calculation",
                ]
            ),
            "decoy",
            rng.randint(2, 20),
        )
        decoys.append("log-line-in-crash-function")
    if plan.rewrite:
        # The crash line itself is rewritten, computing the same with the failing value.
        st.rewritten = rng.choice(
            [f"{prog.kind.out}_value", f"resolved_{prog.kind.out}", f"{prog.kind.out}_text"]
        )
        add(
            rng.choice(
                [
                    f"Rename locals in the {domain} calculation",
                    f"Clearer names in {prog.paths['calc'].rsplit('/', 1)[-1]}",
                    f"Fix {domain} calculation naming",
                ]
            ),
            "decoy",
            rng.randint(2, 20),
        )
        decoys.append("rewrite-of-crash-line")
    if rng.random() < 0.7:
        st.comments.setdefault("calc", []).append("keep the rounding rules in one place")
        add(
            rng.choice(
                [
                    f"Comment the {domain} calculation",
                    f"Fix {domain} calculation edge cases",
                    "Explain the rounding rules",
                ]
            ),
            "decoy",
            rng.randint(2, 20),
        )
        decoys.append("comment-in-crash-function")
    if rng.random() < 0.6:
        st.extras.setdefault("calc", []).insert(0, f"is_{n.s}_closed")
        add(
            rng.choice(
                [
                    f"Add is_{n.s}_closed for the reports",
                    f"Handle closed {domain} in reports",
                    "Reports: closed flag",
                ]
            ),
            "decoy",
            rng.randint(2, 20),
        )
        decoys.append("new-function-in-crash-file")
    if rng.random() < 0.5:
        st.docs["service"] = f"Process one {n.s.replace('_', ' ')}: build, compute, return."
        st.labels[f"entry:describe_{n.s}_request"] = f"{n.s} request"
        st.extras.setdefault("entry", []).append(f"describe_{n.s}_request")
        add("Tidy docstrings and request labels", "decoy", rng.randint(2, 20))
        decoys.append("multi-file-newer")
    st.version = "1.5.1" if early else "1.5.0"
    st.changelog.append(st.version)
    if rng.random() < 0.6:
        st.header["calc"] = f"Calculations on {domain}; amounts in minor units."
        decoys.append("release-touches-crash-file")
    add(f"Release {st.version}", "release", rng.randint(2, 12))
    # Deploys happen after their commit: keep the running release before `now`.
    shift = commits[-1].date - (now - timedelta(hours=rng.randint(5, 9)))
    for c in commits:
        c.date -= shift
    return commits, early_index, decoys


def _fault_note(prog: Program) -> str:
    return {
        "null_guard": "Region routing simplified",
        "config_key": "Settings: clearer billing region name",
        "off_by_one": "Last line lookup",
        "div_zero": "Split by the number of lines",
        "default_changed": "Split ways default",
        "type_changed": "Amounts rounded for display",
        "format_changed": "Dates formatted for the customer",
        "key_renamed": "Customer reference follows the JSON style",
        "filter_changed": "First line lookup ignores closed lines",
        "wire_name": "Payload fields follow the JSON style",
    }[prog.plan.kind]


def _fault_message(prog: Program, rng: random.Random) -> str:
    """What the author wrote: often what the change does, sometimes only a vague cleanup."""
    d = prog.n.p.replace("_", " ")
    specific = {
        "null_guard": [
            f"Simplify region routing for {d}",
            "Drop the region fallback, the API always sends one",
        ],
        "config_key": ["Rename the billing region setting", "Settings: use the new variable names"],
        "off_by_one": [f"Read the last line of {d} directly", "Simplify the last line lookup"],
        "div_zero": [f"Split {d} by their real number of lines", "Remove the minimum of one part"],
        "default_changed": ["Change the default number of split ways", "No split unless asked"],
        "type_changed": [
            f"Round {d} amounts to two decimals",
            "Amounts formatted with two decimals",
        ],
        "format_changed": ["Format dates the way customers read them", "Dates in day/month/year"],
        "key_renamed": ["Use camelCase for the customer reference", "JSON keys in camelCase"],
        "filter_changed": ["Only open lines count for the first SKU", "Ignore paid lines"],
        "wire_name": [
            "Use camelCase names in the payload type",
            f"Align the {d} payload with the API style guide",
        ],
    }[prog.plan.kind]
    vague = [
        f"Clean up the {d} code",
        "Small refactor before the release",
        f"Tidy {prog.paths[_fault_role(prog)].rsplit('/', 1)[-1]}",
    ]
    subject = rng.choice(specific) if rng.random() < 0.7 else rng.choice(vague)
    return subject + rng.choice(
        ["", "\n\nReviewed in the weekly sync.", "\n\nPart of the cleanup ticket."]
    )


def _contract_doc(plan: Plan) -> str | None:
    if not plan.contract:
        return None
    return "README.md" if plan.contract_in_readme else f"docs/{plan.names.p}.md"


def _fault_role(prog: Program) -> str:
    return {
        "crash": "calc",
        "above": "calc",
        "caller": "service",
        "callee": "helper",
        "producer": "builder",
        "config": "config",
        "binding": "helper",
        "schema": "schema",
    }[prog.plan.position]


def _render(prog: Program, st: State, extra: dict[str, str]) -> dict[str, list[Line]]:
    files = prog.files(st)
    for path, text in extra.items():
        files[path] = [(t, None) for t in text.splitlines()]
    return files


def text_of(lines: list[Line]) -> str:
    return "\n".join(t for t, _ in lines) + "\n"


def _write_git(commits: list[Commit], trees: list[dict[str, list[Line]]], bundle: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="gen-") as tmp:
        repo = Path(tmp) / "repo.git"
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": tmp,
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_SYSTEM": os.devnull,
            "LC_ALL": "C",
        }
        subprocess.run(
            ["git", "init", "-q", "--bare", "--template=", "-b", "main", str(repo)],
            env=env,
            check=True,
        )
        stream = bytearray()
        previous: dict[str, str] = {}
        for i, (c, tree) in enumerate(zip(commits, trees, strict=True)):
            texts = {p: text_of(lines) for p, lines in tree.items()}
            msg = c.message.encode()
            stamp = f"{int(c.date.timestamp())} +0000"
            who = f"{c.author[0]} <{c.author[1]}@{c.author[1].split('.')[1]}.example>"
            stream += f"commit refs/heads/main\nmark :{i + 1}\n".encode()
            stream += f"author {who} {stamp}\ncommitter {who} {stamp}\n".encode()
            stream += f"data {len(msg)}\n".encode() + msg + b"\n"
            if i:
                stream += f"from :{i}\n".encode()
            for path in sorted(set(previous) - set(texts)):
                stream += f"D {path}\n".encode()
            for path, text in sorted(texts.items()):
                if previous.get(path) != text:
                    data = text.encode()
                    stream += f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n"
            previous = texts
        marks = Path(tmp) / "marks"
        subprocess.run(
            ["git", "-C", str(repo), "fast-import", "--quiet", f"--export-marks={marks}"],
            input=bytes(stream),
            env=env,
            check=True,
        )
        shas = dict(line.split() for line in marks.read_text().splitlines())
        for i, c in enumerate(commits):
            c.sha = shas[f":{i + 1}"]
        bundle.unlink(missing_ok=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "bundle",
                "create",
                "-q",
                str(bundle.resolve()),
                "HEAD",
                "main",
            ],
            env=env,
            check=True,
            capture_output=True,
        )


# --- Sentry recordings -------------------------------------------------------------------


def _find(lines: list[Line], tag: str) -> int:
    hits = [i + 1 for i, (_, g) in enumerate(lines) if g and tag in g.split()]
    if len(hits) != 1:
        raise AssertionError(f"tag {tag!r} found {len(hits)} times")
    return hits[0]


def _context(lines: list[Line], number: int) -> list[list[Any]]:
    lo, hi = max(1, number - 5), min(len(lines), number + 5)
    return [[i, lines[i - 1][0]] for i in range(lo, hi + 1)]


def _frame_names(prog: Program, role: str, path: str) -> tuple[str, str, str | None]:
    lang, n = prog.plan.lang, prog.n
    if lang == "py":
        return path, "/app/" + path, path[:-3].replace("/", ".")
    if lang == "rb":
        return path, "/app/" + path, None
    if lang == "php":
        return "/" + path, "/var/www/html/" + path, None
    if lang == "js":
        parts = path[:-3].split("/")
        return (
            "app:///" + path,
            "app:///" + path,
            f"{'.'.join(parts[:-1][1:]) or parts[0]}:{parts[-1]}",
        )
    if lang == "ts":
        parts = path[:-3].split("/")
        return "../../" + path, "app:///" + path, f"{'.'.join(parts[1:-1]) or parts[0]}:{parts[-1]}"
    if lang in ("java", "kt"):
        base = path.rsplit("/", 1)[1]
        fqcn = ".".join(path.split("/")[3:])[: -len(base)] + prog.owners[role]
        return base, base, fqcn
    return path, "/build/" + path, f"github.com/{n.org}/{n.app}/internal/{n.pkg}"


def _function_name(prog: Program, role: str, fn: str) -> str:
    lang = prog.plan.lang
    name = prog.lang.fname(fn)
    if lang == "php":
        ns = {
            "entry": {
                "web": "App\\Http\\Controllers",
                "job": "App\\Jobs",
                "cli": "App\\Console\\Commands",
            }[prog.plan.entry]
        }.get(role)
        from tests.generator.program import _php_ns

        ns = ns or _php_ns(prog, role)
        return f"{ns}\\{prog.owners[role]}::{name}"
    if lang == "ts" and role == "entry":
        return f"{prog.owners['entry']}.{name}"
    if lang == "kt" and role == "entry" and prog.plan.entry == "job":
        return f"{name}$suspendImpl"
    return name


def _in_app(
    prog: Program,
    tree: dict[str, list[Line]],
    role: str,
    fn: str,
    tag: str,
    path: str | None = None,
) -> dict[str, Any]:
    path = path or prog.paths[role]
    lines = tree[path]
    number = _find(lines, tag)
    filename, abs_path, module = _frame_names(prog, role, path)
    return sentry.frame(
        filename,
        abs_path,
        module,
        _function_name(prog, role, fn),
        number,
        True,
        _context(lines, number),
    )


def _stack(prog: Program, tree: dict[str, list[Line]]) -> tuple[list[dict], list[dict], dict]:
    """(frames of the exception raised at the crash, frames of the re-raise, the crash frame)."""
    plan, n = prog.plan, prog.n
    entry = _in_app(prog, tree, "entry", prog.entry_fn["name"], "entry_call")
    service = _in_app(prog, tree, "service", f"process_{n.s}", "call")
    calc = _in_app(prog, tree, "calc", prog.calc_fn, "sink")
    frames = [*sentry.library_before(plan.lang, plan.entry), entry, service, calc]
    crash = calc
    _, _, _, failure = sentry.failure(plan.kind, plan.lang, {})
    if plan.lang == "go" and plan.kind == "format_changed":
        path = f"internal/{n.pkg}/model.go"
        lines = tree[path]
        number = next(i + 1 for i, (t, _) in enumerate(lines) if t.strip() == "panic(err)")
        fname, abs_path, module = _frame_names(prog, "calc", path)
        crash = sentry.frame(
            fname, abs_path, module, "mustParseDate", number, True, _context(lines, number)
        )
        frames.append(crash)
    frames += sentry.library_after(plan.lang, failure)
    if plan.recovered:
        frames = _recovered(prog, tree, frames, entry)
    wrapper: list[dict] = []
    if plan.chained:
        rethrow = _in_app(prog, tree, "service", f"process_{n.s}", "rethrow")
        wrapper = [*sentry.library_before(plan.lang, plan.entry), entry, rethrow]
        if plan.lang == "py":  # a cause's traceback starts where it was caught
            frames = [service, *frames[frames.index(service) + 1 :]]
    return frames, wrapper, crash


def _recovered(prog: Program, tree: dict[str, list[Line]], frames: list[dict], entry: dict):
    """A Go panic recovered by a deferred handler that reports it: the SDK takes the stack
    inside the handler, so (oldest first) the runtime's panic frames are followed by the
    handler's own frame, in-app, at the top. A web handler runs inside its recover middleware
    (the middleware's closure calls it), not inside sentryhttp's."""
    path, _ = _recover_path(prog)
    if prog.plan.entry == "web":
        frames = [f for f in frames if "sentry-go" not in (f["module"] or "")]
        outer = _in_app(prog, tree, "entry", "withRecover.func1", "next", path)
        frames.insert(frames.index(entry), outer)
        top = _in_app(prog, tree, "entry", "withRecover.func1.1", "recover", path)
    else:
        top = _in_app(prog, tree, "entry", "recoverPanic", "recover", path)
    return [*frames, top]


def _recover_path(prog: Program) -> tuple[str, str]:
    if prog.plan.entry == "web":
        return f"internal/{prog.n.pkg}/middleware.go", "withRecover.func1.1"
    return f"internal/{prog.n.pkg}/recover.go", "recoverPanic"


def _payload(prog: Program, rng: random.Random) -> tuple[dict[str, Any], dict[str, Any]]:
    """The failing input and the values the exception message quotes."""
    kind = prog.plan.kind
    count = rng.randint(2, 4)
    statuses = rng.choice([["pending", "paid"], ["paid"], ["pending"]])
    lines = [
        {
            "sku": f"SKU-{rng.randint(1000, 9999)}",
            "qty": rng.randint(1, 9),
            "status": rng.choice(statuses),
        }
        for _ in range(count)
    ]
    issued = datetime(
        2026,
        rng.randint(1, 12),
        rng.randint(1, 28),
        rng.randint(6, 20),
        rng.choice([0, 15, 30]),
        tzinfo=UTC,
    )
    payload: dict[str, Any] = {
        "id": f"{prog.n.s[:3].upper()}-{rng.randint(10000, 99999)}",
        "lines": lines,
        "region": prog.plan.dflt,
        "net_amount": round(rng.uniform(10, 3000), 2),
        "issued_at": issued.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "customer_id": f"C-{rng.randint(1000, 99999)}",
        "options": {"split_ways": rng.randint(2, 4)},
    }
    if kind == "null_guard":
        payload.pop("region")
    if kind == "div_zero":
        payload["lines"] = []
    if kind == "default_changed":
        payload["options"] = {}
    ctx: dict[str, Any] = {"n": len(payload["lines"]), "date_text": issued.strftime("%d/%m/%Y")}
    L, pos, k = prog.lang, prog.plan.position, prog.kind
    if kind == "type_changed":
        ctx["value_text"] = f"{L.fname(prog.helper_fn)}(...)" if pos == "callee" else L.var(k.vname)
    if kind in ("null_guard", "config_key", "wire_name"):
        owner = ".".join(prog.paths["helper"].split("/")[3:-1]) + "." + prog.owners["helper"]
        ctx["npe_subject"] = (
            f'the return value of "{owner}.{L.fname(prog.helper_fn)}(String)"'
            if pos == "callee"
            else f'"{L.var(k.vname)}"'
        )
        ctx["vname"] = k.vname
    return payload, ctx


def _write_sentry(prog, rng, commits, trees, release, releases, early, now, out, meta) -> None:
    plan, n = prog.plan, prog.n
    prefix = f"{n.app}@"
    org, project = n.org, n.app
    payload, ctx = _payload(prog, rng)
    etype, evalue, emodule, _ = sentry.failure(plan.kind, plan.lang, ctx)
    base_id = 6_100_000_000 + plan.seed * 7919 % 900_000_000
    issue_id = str(base_id + 11)
    deploy = {i: commits[i].date + timedelta(minutes=rng.randint(20, 60)) for i in releases}
    first_release = early if early is not None else release
    first_seen = deploy[first_release] + timedelta(minutes=rng.randint(3, 40))
    last_seen = now - timedelta(minutes=rng.randint(5, 60))
    ev_releases = [release] * 3 + ([early] * 2 if early is not None else [])
    times = sorted(
        (first_seen + (last_seen - first_seen) * rng.random() for _ in ev_releases[1:]),
        reverse=True,
    )
    times = [last_seen, *times]
    if early is not None:  # the newest events are of the running release
        times = sorted(times, reverse=True)
        times = times[:3] + [min(t, deploy[release] - timedelta(minutes=1)) for t in times[3:]]
        times = sorted(times, reverse=True)
        times[-1] = max(times[-1], first_seen)
        ev_releases = [release if t >= deploy[release] else early for t in times]
    else:
        times = [max(t, deploy[release] + timedelta(minutes=1)) for t in times]
        first_seen = min(times)
    title, culprit = _title(etype, evalue, plan, prog)
    if plan.recovered and plan.entry != "web":  # Sentry names the top in-app frame
        culprit = _recover_path(prog)[1]
    wrapper_type = prog.wrap_class().lstrip("\\") if plan.chained else None
    wrapper_value = ""
    if plan.chained:
        wrapper_value = (
            prog.wrap_message()
            .replace("#{rec['id']}", payload["id"])
            .replace("{rec['id']}", payload["id"])
            .replace("${rec.id}", payload["id"])
            .replace('${rec["id"]}', payload["id"])
        )
        if plan.lang == "rb" or plan.suppressed:
            wrapper_value = wrapper_value + f": {evalue}"
        title, _ = _title(wrapper_type, wrapper_value, plan, prog)
    events = []
    for i, (when, rel) in enumerate(zip(times, ev_releases, strict=True)):
        frames, wrap_frames, crash = _stack(prog, trees[rel])
        values = [_exc_value(etype, evalue, emodule, frames, plan)]
        if plan.suppressed:  # only the re-raised exception is recorded
            values, crash = [], wrap_frames[-1]
        if plan.chained:
            values.append(
                _exc_value(wrapper_type, wrapper_value, _wrap_module(prog), wrap_frames, plan)
            )
        entries: list[dict[str, Any]] = [
            {"type": "exception", "data": {"values": values, "hasSystemFrames": True}}
        ]
        if plan.entry == "web":
            entries.append({"type": "request", "data": _request(prog, payload)})
        events.append(
            _event(
                prog,
                issue_id,
                f"{plan.seed:08x}{i:04x}" + "a" * 20,
                title,
                culprit,
                when,
                prefix + commits[rel].sha,
                deploy[rel],
                entries,
                payload,
                crash,
            )
        )
    # The Go SDK reports a recovered panic (hub.Recover) at level fatal.
    level = "fatal" if plan.recovered else "error"
    for ev in events:
        ev["tags"] = [
            t if t["key"] != "level" else {"key": "level", "value": level} for t in ev["tags"]
        ]
    issues = [
        _issue(
            prog,
            issue_id,
            title,
            culprit,
            etype,
            evalue,
            len(events) + rng.randint(8, 60),
            first_seen,
            last_seen,
            level,
        )
    ]
    all_events = {issue_id: events}
    _noise(
        prog,
        rng,
        commits,
        trees,
        releases,
        release,
        deploy,
        now,
        base_id,
        issues,
        all_events,
        prefix,
        issues[0],
    )
    rng.shuffle(issues)
    sentry_dir = out / "sentry" / "events"
    sentry_dir.mkdir(parents=True, exist_ok=True)
    (out / "sentry" / "issues.json").write_text(
        json.dumps(issues, indent=1, ensure_ascii=False) + "\n"
    )
    for iid, evs in all_events.items():
        (sentry_dir / f"{iid}.json").write_text(
            json.dumps(evs, indent=1, ensure_ascii=False) + "\n"
        )
    since = (now - timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    scenario = {
        "project_key": n.app,
        "question": _question(prog, rng),
        "language": plan.question_lang,
        "repository": f"{org}/{n.app}",
        "sentry": {"organization": org, "project": project},
        "release_prefix": prefix,
        "since": _iso(since),
        "until": _iso(since + timedelta(days=2)),
        "now": _iso(now),
    }
    (out / "scenario.json").write_text(json.dumps(scenario, indent=1, ensure_ascii=False) + "\n")
    running = trees[release]
    fault_role = _fault_role(prog)
    fault_path = prog.paths[fault_role]
    fault_line = _find(running[fault_path], "fault")
    _, wrap_frames, crash_frame = _stack(prog, running)
    crash_path = _crash_path(prog, crash_frame)
    if plan.suppressed:  # the cause is not recorded: the exception is raised by the re-raise
        crash_frame, crash_path = wrap_frames[-1], prog.paths["service"]
    fault_commit = next((c.sha for c in commits if c.role == "fault"), None)
    expected = {
        "fault": {"file": fault_path, "lines": [fault_line, fault_line]},
        "crash": {"file": crash_path, "lines": [crash_frame["lineNo"], crash_frame["lineNo"]]},
        "commit": fault_commit,
        "contract_doc": _contract_doc(plan),
        "issue_id": issue_id,
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    gen = asdict(meta) | {
        "running_release": commits[release].sha,
        "commits": [
            {"sha": c.sha, "role": c.role, "message": c.message.splitlines()[0]} for c in commits
        ],
    }
    (out / "generated.json").write_text(json.dumps(gen, indent=1) + "\n")


def _crash_path(prog: Program, frame: dict) -> str:
    if prog.plan.lang == "go" and frame["function"] == "mustParseDate":
        return f"internal/{prog.n.pkg}/model.go"
    return prog.paths["calc"]


def _wrap_module(prog: Program) -> str | None:
    return {"java": "java.lang", "kt": "java.lang"}.get(prog.plan.lang)


def _exc_value(etype, evalue, module, frames, plan) -> dict[str, Any]:
    return {
        "type": etype,
        "value": evalue,
        "module": module,
        "mechanism": sentry.mechanism(plan.lang, plan.entry),
        "threadId": None,
        "rawStacktrace": None,
        "stacktrace": {
            "frames": frames,
            "framesOmitted": None,
            "registers": None,
            "hasSystemFrames": True,
        },
    }


def _title(etype: str, evalue: str, plan: Plan, prog: Program) -> tuple[str, str]:
    title = f"{etype}: {evalue}".split("\n")[0][:200]
    n = prog.n
    if plan.entry == "web":
        culprit = f"POST /{n.p.replace('_', '-')}"
    elif plan.lang == "py":
        culprit = f"{prog.paths['calc'][:-3].replace('/', '.')} in {prog.calc_fn}"
    else:
        culprit = prog.lang.fname(prog.calc_fn)
    return title, culprit


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _request(prog: Program, payload: dict[str, Any]) -> dict[str, Any]:
    n = prog.n
    return {
        "apiTarget": None,
        "method": "POST",
        "url": f"https://{n.app}.{n.org}.example/{n.p.replace('_', '-')}",
        "query": [],
        "fragment": None,
        "data": payload,
        "headers": [["Content-Type", "application/json"], ["User-Agent", "okhttp/4.12.0"]],
        "cookies": [],
        "env": None,
        "inferredContentType": "application/json",
    }


def _event(
    prog,
    issue_id,
    event_id,
    title,
    culprit,
    when,
    version,
    deployed,
    entries,
    payload,
    crash,
    entry=None,
):
    plan, n = prog.plan, prog.n
    entry = entry or plan.entry
    tags = [
        ("environment", "production"),
        ("handled", "no"),
        ("level", "error"),
        ("release", version),
        ("server_name", f"{n.app}-{event_id[:6]}"),
    ]
    context: dict[str, Any] = {}
    if entry == "web":
        tags += [("transaction", culprit), ("url", entries[-1]["data"]["url"])]
    elif entry == "job":
        tags += [("queue", f"{n.p}-sync"), ("job.name", prog.lang.fname(prog.entry_fn["name"]))]
        context["job"] = {"args": [payload], "attempt": 3}
    else:
        tags += [("command", f"export-{n.p.replace('_', '-')}")]
        context["argv"] = [f"export-{n.p.replace('_', '-')}", f"/data/{n.p}-{when:%Y%m%d}.json"]
    return {
        "id": event_id,
        "eventID": event_id,
        "groupID": issue_id,
        "projectID": "4508000000000001",
        "title": title,
        "message": "",
        "culprit": culprit,
        "platform": LANGS[plan.lang].platform,
        "type": "error",
        "dateCreated": _iso(when),
        "dateReceived": _iso(when + timedelta(milliseconds=180)),
        "release": {
            "version": version,
            "dateCreated": _iso(deployed),
            "lastDeploy": {"environment": "production", "dateFinished": _iso(deployed)},
        },
        "dist": None,
        "tags": [{"key": k, "value": v} for k, v in sorted(tags)],
        "user": None,
        "contexts": {"runtime": {"type": "runtime", "name": LANGS[plan.lang].platform}},
        "sdk": sentry.sdk(plan.lang),
        "metadata": _event_metadata(entries, crash),
        "context": context,
        "entries": entries,
        "errors": [],
    }


def _event_metadata(entries: list[dict], crash: dict) -> dict[str, Any]:
    values = entries[0]["data"].get("values")
    if not values:
        return {"title": entries[0]["data"]["formatted"]}
    last = values[-1]
    return {
        "type": last["type"],
        "value": last["value"],
        "filename": crash["filename"],
        "function": crash["function"],
    }


def _issue(
    prog, issue_id, title, culprit, etype, evalue, count, first, last, level, *, default=False
):
    n = prog.n
    meta = {"title": title} if default else {"type": etype, "value": evalue}
    return {
        "id": issue_id,
        "shortId": f"{n.app.upper()}-{int(issue_id) % 1000:X}",
        "title": title,
        "culprit": culprit,
        "permalink": f"https://{n.org}.sentry.io/issues/{issue_id}/",
        "level": level,
        "status": "unresolved",
        "platform": LANGS[prog.plan.lang].platform,
        "type": "default" if default else "error",
        "metadata": meta,
        "count": str(count),
        "userCount": max(1, count // 7),
        "firstSeen": _iso(first),
        "lastSeen": _iso(last),
    }


def _noise(
    prog,
    rng,
    commits,
    trees,
    releases,
    release,
    deploy,
    now,
    base_id,
    issues,
    all_events,
    prefix,
    relevant,
):
    """Unrelated issues: a busier one of an older release, one inside the window, a warning."""
    plan, n = prog.plan, prog.n
    relevant_count = int(relevant["count"])
    specs = [("archive", releases[0], 5), ("notify", release, 2)]
    for j, (role, rel, days) in enumerate(specs):
        etype, evalue, emodule, lib = sentry.noise_failure(role, plan.lang)
        iid = str(base_id + 23 + j)
        fn = f"{role}_{n.s}"
        frames = [
            *sentry.library_before(plan.lang, "job"),
            _in_app(prog, trees[rel], role, fn, "noise"),
        ]
        frames += [sentry.lib_frame(*f) for f in lib]
        first = now - timedelta(days=days + rng.randint(0, 20))
        events = []
        used = [r for r in releases if r <= release]
        for i in range(3):
            when = now - timedelta(hours=1 + i * rng.randint(2, 7), minutes=rng.randint(0, 59))
            r = rel if i else used[-1]
            fr = [
                *sentry.library_before(plan.lang, "job"),
                _in_app(prog, trees[r], role, fn, "noise"),
            ]
            fr += [sentry.lib_frame(*f) for f in lib]
            values = [
                _exc_value(etype, evalue, emodule, fr, plan)
                | {"mechanism": {"type": "generic", "handled": True}}
            ]
            entries = [{"type": "exception", "data": {"values": values, "hasSystemFrames": True}}]
            crash = fr[-1 - len(lib)]
            events.append(
                _event(
                    prog,
                    iid,
                    f"{plan.seed:08x}{j + 1:02x}{i:02x}" + "b" * 20,
                    f"{etype}: {evalue}"[:200],
                    prog.lang.fname(fn),
                    when,
                    prefix + commits[r].sha,
                    deploy[r],
                    entries,
                    {"id": "n/a"},
                    crash,
                    "job",
                )
            )
        del frames
        events.sort(key=lambda e: e["dateCreated"], reverse=True)
        count = relevant_count * rng.randint(3, 12) + rng.randint(0, 50)
        issues.append(
            _issue(
                prog,
                iid,
                f"{etype}: {evalue}"[:200],
                prog.lang.fname(fn),
                etype,
                evalue,
                count,
                first,
                datetime.fromisoformat(events[0]["dateCreated"].replace("Z", "+00:00")),
                "error",
            )
        )
        all_events[iid] = events
    # A warning that shares the question's words.
    iid = str(base_id + 31)
    when = now - timedelta(minutes=rng.randint(30, 300))
    msg = f"Slow {n.s.replace('_', ' ')} export: {rng.uniform(5, 30):.1f} s for {rng.randint(200, 900)} records"
    ev = _event(
        prog,
        iid,
        f"{plan.seed:08x}ff00" + "c" * 20,
        msg,
        f"{n.p.replace('_', ' ')} export",
        when,
        prefix + commits[release].sha,
        deploy[release],
        [{"type": "message", "data": {"formatted": msg, "message": msg, "params": None}}],
        {"id": "n/a"},
        {"filename": None, "function": None},
        "job",
    )
    ev["type"] = "default"
    ev["tags"] = [
        t if t["key"] != "level" else {"key": "level", "value": "warning"} for t in ev["tags"]
    ]
    all_events[iid] = [ev]
    issues.append(
        _issue(
            prog,
            iid,
            msg,
            f"{n.p.replace('_', ' ')} export",
            "",
            "",
            rng.randint(3, 40),
            when - timedelta(days=rng.randint(0, 10)),
            when,
            "warning",
            default=True,
        )
    )


def _question(prog: Program, rng: random.Random) -> str:
    n, plan = prog.n, prog.plan
    d = n.p.replace("_", " ")
    en = {
        "web": [
            f"Since this morning's deploy, creating {d} fails with a 500 for some customers. What broke?",
            f"Customers report errors when they submit {d}. Can you find the cause?",
        ],
        "job": [
            f"The {n.s.replace('_', ' ')} sync job keeps failing since the last release. Why?",
            f"Our {d} sync worker is erroring on every retry. What changed?",
        ],
        "cli": [
            f"The export-{n.p.replace('_', '-')} command crashes on last night's file. What's wrong?",
            f"Exporting {d} from the command line fails since the release. Can you investigate?",
        ],
    }
    es = {
        "web": [
            f"Desde el despliegue de esta mañana, crear {d} falla con un 500 para algunos clientes. ¿Qué se ha roto?",
            f"Los clientes ven errores al enviar {d}. ¿Puedes encontrar la causa?",
        ],
        "job": [
            f"El job de sincronización de {d} falla desde la última versión. ¿Por qué?",
            f"El worker que sincroniza {d} da error en cada reintento. ¿Qué ha cambiado?",
        ],
        "cli": [
            f"El comando export-{n.p.replace('_', '-')} falla con el fichero de anoche. ¿Qué pasa?",
            f"Exportar {d} desde la línea de comandos falla desde la versión nueva. ¿Lo investigas?",
        ],
    }
    return rng.choice((es if plan.question_lang == "es" else en)[plan.entry])
