# ruff: noqa: E501 - templates of generated source lines and prose, kept one per line
"""The application a generated incident happens in, rendered from its plan and its state.

Every file is rendered from a ``State`` (is the fault in, which comments, docstrings and extra
functions the decoy commits added), so each commit's tree and the line numbers the frames and
the ground truth point at come from one place and cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.generator.faults import KINDS, Kind
from tests.generator.langs import LANGS, Fn, Lang, Line, _lower_first, pascal

ROLES = ("entry", "service", "calc", "helper", "builder", "config", "archive", "notify")

# The value's type key (langs.Lang.types) for each kind.
VTYPE = {
    "null_guard": "NSTR",
    "config_key": "NSTR",
    "off_by_one": "INT",
    "div_zero": "INT",
    "default_changed": "INT",
    "type_changed": "NUM",
    "format_changed": "DATE",
    "key_renamed": "MAP",
    "filter_changed": "LIST",
    "wire_name": "NSTR",
}
SRC_TYPE = {
    "null_guard": "NSTR",
    "off_by_one": "LIST",
    "div_zero": "LIST",
    "filter_changed": "LIST",
    "default_changed": "MAP",
    "config_key": "MAP",
    "type_changed": "NUM",
    "format_changed": "DATE",
    "key_renamed": "STR",
    "wire_name": "NSTR",
}
CALC_FN = {
    "null_guard": "{s}_region_key",
    "config_key": "{s}_region_key",
    "off_by_one": "last_{s}_sku",
    "div_zero": "split_{s}_total",
    "default_changed": "split_{s}_total",
    "type_changed": "{s}_gross_amount",
    "format_changed": "{s}_due_date",
    "key_renamed": "{s}_customer",
    "filter_changed": "first_open_sku",
    "wire_name": "{s}_customer_key",
}
HELPER_FN = {
    "null_guard": "resolve_region",
    "off_by_one": "last_index",
    "div_zero": "part_count",
    "default_changed": "split_ways",
    "type_changed": "net_amount",
    "format_changed": "due_date_text",
    "key_renamed": "customer_ref",
    "filter_changed": "open_lines",
    "wire_name": "customer_ref",
}
# Position "binding": the crash line's value is bound above it from a call into another file
# of the repository (a query method, a normalizer, a client wrapper) where the fault is.
BINDING = {
    "filter_changed": ("Repository", "find_open_lines"),
    "format_changed": ("Normalizer", "normalize_due_date"),
    "null_guard": ("Client", "lookup_region"),
}
CALC_DOC = {
    "null_guard": "Upper-case routing key of the {s}'s region.",
    "config_key": "Upper-case routing key of the configured billing region.",
    "off_by_one": "SKU of the {s}'s last line.",
    "div_zero": "Quantity of each part when the {s} is split across its lines.",
    "default_changed": "Quantity of each part when the {s} is split in equal ways.",
    "type_changed": "Gross amount of the {s}, VAT included.",
    "format_changed": "Due date of the {s}.",
    "key_renamed": "Customer reference the {s} is billed to.",
    "filter_changed": "SKU of the first line that is not void.",
    "wire_name": "Routing key of the customer the {s} is billed to.",
}


@dataclass
class Names:
    s: str  # singular, snake
    p: str  # plural, snake
    pkg: str
    org: str
    app: str  # project slug, kebab

    @property
    def S(self) -> str:
        return pascal(self.s)

    @property
    def P(self) -> str:
        return pascal(self.p)


@dataclass
class Plan:
    seed: int
    lang: str
    kind: str
    position: str
    entry: str  # web | job | cli
    chained: bool
    truncated: bool
    question_lang: str
    names: Names
    contract: bool
    caller_inline: bool
    filler: int  # lines between an "above" fault and the crash line
    dflt: str = "EU"
    suppressed: bool = False  # the re-raise drops its cause (raise … from None)
    contract_in_readme: bool = False  # the contract is a section of README.md, not a docs/ page
    recovered: bool = False  # Go: a deferred handler recovers the panic and reports it
    rewrite: bool = False  # a commit newer than the fault rewrites the crash line (same value)


@dataclass
class State:
    bad: bool = False
    refactored: bool = False  # an older commit rewrote the crash line's function
    comments: dict[str, list[str]] = field(default_factory=dict)
    docs: dict[str, str] = field(default_factory=dict)
    extras: dict[str, list[str]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    header: dict[str, str] = field(default_factory=dict)
    version: str = "1.0.0"
    changelog: list[str] = field(default_factory=list)
    doc_notes: dict[str, list[str]] = field(default_factory=dict)
    rewritten: str = ""  # a newer commit renamed the crash line's result to this
    calc_log: bool = False  # a newer commit logs in the crashing function

    def copy(self) -> State:
        return State(
            self.bad,
            self.refactored,
            {k: list(v) for k, v in self.comments.items()},
            dict(self.docs),
            {k: list(v) for k, v in self.extras.items()},
            dict(self.labels),
            dict(self.header),
            self.version,
            list(self.changelog),
            {k: list(v) for k, v in self.doc_notes.items()},
            self.rewritten,
            self.calc_log,
        )


class Program:
    """Renders the application's files for one plan."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.lang: Lang = LANGS[plan.lang]
        self.kind: Kind = KINDS[plan.kind]
        n = plan.names
        self.n = n
        self.paths = _paths(plan.lang, n, plan.entry)
        self.owners = _owners(n, plan.entry, plan.lang)
        self.calc_fn = CALC_FN[plan.kind].format(s=n.s)
        self.helper_fn = HELPER_FN.get(plan.kind, "resolve_region")
        if plan.position == "binding":
            word, self.helper_fn = BINDING[plan.kind]
            self.owners["helper"] = f"{n.S}{word}"
            path = self.paths["helper"]
            self.paths["helper"] = path.replace("Helpers", word).replace("helpers", word.lower())
        if plan.position == "schema":
            self.paths["schema"] = _schema_path(plan.lang, n)
        self.entry_fn = _entry_fn(plan.lang, plan.entry, n)

    # --- the pieces of the fault ----------------------------------------------------
    def expr(self, src: str, bad: bool) -> str:
        table = self.kind.lang[self.plan.lang]
        text = table["bad" if bad else "good"]
        return self.tokens(text.replace("@S@", src))

    def tokens(self, text: str) -> str:
        k = self.kind
        keys = {
            "null_guard": ("region", "region"),
            "config_key": self.config_keys(),
            "key_renamed": ("customer_id", "customerId"),
            "default_changed": (self.option_key(), self.option_key()),
        }.get(k.name, ("", ""))
        text = text.replace("@K1@", keys[0]).replace("@K2@", keys[1])
        text = text.replace("@K@", keys[0]).replace("@D1@", "1").replace("@D2@", "0")
        text = text.replace("@D@", self.plan.dflt).replace("@VN@", k.vname)
        return text.replace("@O@", self.lang.var(k.out).lstrip("$"))

    def config_keys(self) -> tuple[str, str]:
        if self.plan.position == "config":
            return ("BILLING_REGION", "BILLING_REGION_CODE")
        return ("region", "region_code")

    def option_key(self) -> str:
        return "SPLIT_WAYS" if self.plan.position == "config" else "split_ways"

    def sink(self, value: str, st: State) -> str:
        text = self.kind.lang[self.plan.lang]["sink"].replace("@V@", value)
        return self.tokens(text.replace("@O@", self.out_name(st)))

    def out_name(self, st: State) -> str:
        """The crash line's result: an older refactor renamed it (so blame of the crash line
        points at that older commit unless the fault is on the crash line)."""
        name = st.rewritten or (self.kind.out if st.refactored else "computed")
        return self.lang.var(name).lstrip("$")

    def v(self) -> str:
        return self.lang.var(self.kind.vname)

    def src_var(self) -> str:
        return self.lang.var("raw" if self.plan.position == "config" else self.src_name())

    def src_name(self) -> str:
        return {"MAP": "options", "NUM": "net", "DATE": "issued_at", "STR": "customer_id"}.get(
            SRC_TYPE[self.plan.kind], self.kind.field
        )

    def src_fetch(self, mapvar: str) -> str:
        """The line reading S (the fault's input) from ``mapvar``."""
        key = {"MAP": "options", "NUM": "net_amount"}.get(SRC_TYPE[self.plan.kind], self.kind.field)
        key = key if SRC_TYPE[self.plan.kind] != "NSTR" else "region"
        return self.lang.fetch(self.src_name(), SRC_TYPE[self.plan.kind], mapvar, key)

    # --- functions of each role -------------------------------------------------------
    def calc(self, st: State) -> Fn:
        L, pos, k = self.lang, self.plan.position, self.kind
        body: list[tuple[int, str, str | None]] = []
        needs_lines = k.name in ("off_by_one", "div_zero", "default_changed")
        if needs_lines and not (
            k.name != "default_changed" and pos in ("crash", "above", "callee")
        ):
            body.append((0, L.fetch("lines", "LIST", "rec", "lines"), None))
        if pos in ("crash", "above", "callee", "binding"):
            src_line = self.src_fetch("rec")
            if k.name in ("off_by_one", "div_zero"):
                src_line = L.fetch("lines", "LIST", "rec", "lines")
            body.append((0, src_line, None))
        if pos == "producer":
            body.append((0, L.fetch(k.vname, VTYPE[k.name], "rec", k.vname), None))
        if pos == "config":
            body.append((0, L.fetch(k.vname, VTYPE[k.name], "settings", k.vname), None))
        if pos == "schema":  # the decoded field, under its name inside the application
            body.append((0, L.fetch(k.vname, VTYPE[k.name], "rec", k.vname), None))
        prelude = k.lang[self.plan.lang].get("prelude")
        if prelude:
            body.append((0, prelude, None))
        for text in st.comments.get("calc", []):
            body.append((0, L.comment(text), None))
        src = self.src_var()
        if pos == "crash":
            value = self.expr(src, st.bad)
            body.append((0, self.sink(value, st), "sink fault"))
        else:
            if pos == "above":
                line = L.assign(k.vname, VTYPE[k.name], self.expr(src, st.bad))
                body.append((0, line, "fault"))
                body += self.filler(self.plan.filler)
            if pos == "binding":
                call = L.call(self.owners["helper"], self.helper_fn, [src])
                body.append((0, L.assign(k.vname, VTYPE[k.name], call), "binding"))
            if st.calc_log:
                body.append((0, self.log_line(), None))
            if pos in ("binding", "schema"):
                body += self.filler(self.plan.filler)
            value = (
                L.call(self.owners["helper"], self.helper_fn, [src])
                if pos == "callee"
                else self.v()
            )
            body.append((0, self.sink(value, st), "sink"))
        body.append((0, self.result_line(st), None))
        params = [("rec", "REC"), ("settings", "REC")]
        if pos == "caller":
            params.append((k.vname, VTYPE[k.name]))
        doc = st.docs.get("calc", CALC_DOC[k.name].format(s=self.n.s.replace("_", " ")))
        return Fn(self.calc_fn, params, body, doc)

    def log_line(self) -> str:
        return {
            "py": 'logging.getLogger(__name__).info("computing %s", rec["id"])',
            "rb": 'Rails.logger.info("computing #{rec["id"]}")',
            "php": "\\Illuminate\\Support\\Facades\\Log::info('computing', ['id' => $rec['id']]);",
            "js": 'console.info("computing", rec.id);',
            "ts": 'console.info("computing", rec.id);',
            "java": 'System.getLogger("calculations").log(System.Logger.Level.INFO, "computing " + rec.get("id"));',
            "kt": 'java.util.logging.Logger.getLogger("calculations").info("computing ${rec["id"]}")',
            "go": 'log.Printf("computing %v", rec["id"])',
        }[self.plan.lang]

    def result_line(self, st: State) -> str:
        out = self.lang.var(self.out_name(st))
        label = "result" if st.refactored else "value"
        if self.plan.lang == "py":
            return f'return {{"{label}": {out}, "id": rec["id"]}}'
        if self.plan.lang == "rb":
            return f'{{ "{label}" => {out}, "id" => rec["id"] }}'
        if self.plan.lang == "php":
            return f"return ['{label}' => {out}, 'id' => $rec['id']];"
        if self.plan.lang in ("js", "ts"):
            return f"return {{ {label}: {out}, id: rec.id }};"
        if self.plan.lang == "java":
            return f'return Map.of("{label}", {out}, "id", rec.get("id"));'
        if self.plan.lang == "kt":
            return f'return mapOf("{label}" to {out}, "id" to rec["id"])'
        return f'return map[string]any{{"{label}": {out}, "id": rec["id"]}}'

    def filler(self, count: int) -> list[tuple[int, str, str | None]]:
        L = self.lang
        rows = [
            L.assign("currency", "STR", self.get("settings", "currency")),
            L.comment("amounts are kept in minor units until the very end"),
            L.assign("reference", "STR", self.get("rec", "id")),
        ]
        return [(0, r, None) for r in rows[:count]]

    def get(self, mapvar: str, key: str) -> str:
        m = self.lang.var(mapvar)
        return {
            "py": f'{m}["{key}"]',
            "rb": f'{m}["{key}"]',
            "php": f"{m}['{key}']",
            "js": f"{m}.{key}",
            "ts": f"String({m}.{key})",
            "java": f'(String) {m}.get("{key}")',
            "kt": f'{m}["{key}"].toString()',
            "go": f'fmt.Sprint({m}["{key}"])',
        }[self.plan.lang]

    def service(self, st: State) -> Fn:
        L, pos, k = self.lang, self.plan.position, self.kind
        body: list[tuple[int, str, str | None]] = []
        for text in st.comments.get("service", []):
            body.append((0, L.comment(text), None))
        args = ["rec", "settings"]
        args = [L.var(a) for a in args]
        call_tag = "call"
        if pos == "caller":
            src_line = self.src_fetch("rec")
            if k.name in ("off_by_one", "div_zero"):
                src_line = L.fetch("lines", "LIST", "rec", "lines")
            body.append((0, src_line, None))
            if self.plan.caller_inline:
                args.append(self.expr(self.src_var(), st.bad))
                call_tag = "call fault"
            else:
                body.append(
                    (
                        0,
                        L.assign(k.vname, VTYPE[k.name], self.expr(self.src_var(), st.bad)),
                        "fault",
                    )
                )
                args.append(self.v())
        call = L.call(self.owners["calc"], self.calc_fn, args)
        inner = [(0, L.ret(call), call_tag)]
        if self.plan.chained:
            msg = self.wrap_message()
            inner = L.rethrow(inner, msg, self.wrap_class(), self.plan.suppressed)
        body += inner
        doc = st.docs.get("service", f"Process one {self.n.s.replace('_', ' ')} end to end.")
        return Fn(f"process_{self.n.s}", [("rec", "REC"), ("settings", "REC")], body, doc)

    def wrap_class(self) -> str:
        return {
            "py": f"{self.n.S}Error",
            "rb": f"{self.n.S}Error",
            "php": "\\RuntimeException",
            "js": "Error",
            "ts": "Error",
            "java": "IllegalStateException",
            "kt": "IllegalStateException",
        }.get(self.plan.lang, "Error")

    def wrap_message(self) -> str:
        ref = {
            "py": "{rec['id']}",
            "rb": "#{rec['id']}",
            "php": "",
            "js": "${rec.id}",
            "ts": "${rec.id}",
            "java": "",
            "kt": '${rec["id"]}',
        }.get(self.plan.lang, "")
        what = self.n.s.replace("_", " ")
        return f"could not process {what} {ref}".strip()

    def helper(self, st: State) -> Fn:
        k = self.kind
        src = self.src_var() if self.plan.position != "config" else self.lang.var("raw")
        tag = "fault" if self.plan.position in ("callee", "binding") else None
        body = [(0, self.lang.ret(self.expr(src, st.bad if tag else False)), tag)]
        doc = st.docs.get("helper", f"The {k.vname.replace('_', ' ')} the calculation needs.")
        return Fn(self.helper_fn, [(self.src_name(), SRC_TYPE[k.name])], body, doc)

    def builder(self, st: State) -> Fn:
        L, k = self.lang, self.kind
        body: list[tuple[int, str, str | None]] = []
        for text in st.comments.get("builder", []):
            body.append((0, L.comment(text), None))
        entries: list[tuple[str, str, str | None]] = [
            ("id", self.get("payload", "id"), None),
            ("lines", self.raw_get("payload", "lines", "LIST"), None),
            ("region", self.raw_get("payload", "region", "NSTR"), None),
            ("net_amount", self.raw_get("payload", "net_amount", "NUM"), None),
            ("issued_at", self.raw_get("payload", "issued_at", "DATE"), None),
            ("customer_id", self.raw_get("payload", "customer_id", "STR"), None),
            ("options", self.raw_get("payload", "options", "MAP"), None),
        ]
        if self.plan.position == "schema":
            body += [(0, t, None) for t in self.decode_lines()]
            doc = st.docs.get(
                "builder", f"The {self.n.s.replace('_', ' ')} record from its payload."
            )
            return Fn(f"build_{self.n.s}", [("payload", "REC")], body, doc)
        if self.plan.position == "producer":
            body.append((0, self.src_fetch("payload"), None))
            derived = (k.vname, self.expr(self.src_var(), st.bad), "fault")
            names = [e[0] for e in entries]
            if k.vname in names:
                entries[names.index(k.vname)] = derived
            else:
                entries.append(derived)
        body += L.map_literal(entries)
        doc = st.docs.get("builder", f"The {self.n.s.replace('_', ' ')} record from its payload.")
        return Fn(f"build_{self.n.s}", [("payload", "REC")], body, doc)

    def decode_lines(self) -> list[str]:
        """The builder decodes the payload into the wire type, then hands on a record."""
        S = self.n.S
        return {
            "py": [f"return {S}Payload.model_validate(payload).model_dump()"],
            "rb": [f"{S}Payload.from_json(payload)"],
            "php": [f"return {S}Payload::fromArray($payload)->toRecord();"],
            "js": ["return fromJson(payload);"],
            "ts": [
                "const p = fromJson(payload);",
                "return { id: p.id, region: p.region, customer_ref: p.customerRef, issued_at: p.issuedAt };",
            ],
            "java": [
                f"{S}Payload p = new ObjectMapper().convertValue(payload, {S}Payload.class);",
                "Map<String, Object> out = new HashMap<>();",
                'out.put("id", p.id());',
                'out.put("region", p.region());',
                'out.put("customer_ref", p.customerRef());',
                'out.put("issued_at", p.issuedAt());',
                "return out;",
            ],
            "kt": [
                f"val p = WIRE_JSON.decodeFromJsonElement<{S}Payload>(payload.toJsonElement())",
                'return mapOf("id" to p.id, "region" to p.region, "customer_ref" to p.customerRef, "issued_at" to p.issuedAt)',
            ],
            "go": [
                "p, err := decodePayload(payload)",
                "if err != nil {",
                '\tlog.Printf("decode %v: %v", payload["id"], err)',
                "}",
                'return map[string]any{"id": p.ID, "region": p.Region, "customer_ref": p.CustomerRef, "issued_at": p.IssuedAt}',
            ],
        }[self.plan.lang]

    def raw_get(self, mapvar: str, key: str, type_key: str) -> str:
        m = self.lang.var(mapvar)
        return {
            "py": f'{m}.get("{key}")',
            "rb": f'{m}["{key}"]',
            "php": f"{m}['{key}'] ?? null",
            "js": f"{m}.{key}",
            "ts": f"{m}.{key}",
            "java": f'{m}.get("{key}")',
            "kt": f'{m}["{key}"]',
            "go": f'{m}["{key}"]',
        }[self.plan.lang]

    def config(self, st: State) -> Fn:
        L, k = self.lang, self.kind
        raw = {
            "py": "dict(os.environ)",
            "rb": "ENV.to_h",
            "php": "getenv()",
            "js": "process.env",
            "ts": "process.env",
            "java": "new HashMap<>(System.getenv())",
            "kt": "System.getenv()",
            "go": "envMap()",
        }[self.plan.lang]
        body: list[tuple[int, str, str | None]] = [(0, L.assign("raw", "MAP", raw), None)]
        for text in st.comments.get("config", []):
            body.append((0, L.comment(text), None))
        entries: list[tuple[str, str, str | None]] = [
            ("currency", self.env_get("CURRENCY", "EUR"), None),
            ("timeout_seconds", self.env_get("HTTP_TIMEOUT", "5"), None),
        ]
        if self.plan.position == "config":
            entries.append((k.vname, self.expr(L.var("raw"), st.bad), "fault"))
        body += L.map_literal(entries)
        doc = st.docs.get("config", "Settings read once from the environment.")
        return Fn("load_settings", [], body, doc)

    def env_get(self, key: str, default: str) -> str:
        r = self.lang.var("raw")
        return {
            "py": f'{r}.get("{key}", "{default}")',
            "rb": f'{r}.fetch("{key}", "{default}")',
            "php": f"{r}['{key}'] ?? '{default}'",
            "js": f'{r}.{key} ?? "{default}"',
            "ts": f'{r}.{key} ?? "{default}"',
            "java": f'{r}.getOrDefault("{key}", "{default}")',
            "kt": f'{r}["{key}"] ?: "{default}"',
            "go": f'strOr({r}, "{key}", "{default}")',
        }[self.plan.lang]

    def entry(self, st: State) -> Fn:
        L = self.lang
        read, params, tail = self.entry_fn["read"], self.entry_fn["params"], self.entry_fn["tail"]
        body: list[tuple[int, str, str | None]] = [(0, read, None)]
        if self.plan.recovered and self.plan.entry != "web":
            body.insert(0, (0, "defer recoverPanic()", None))
        for text in st.comments.get("entry", []):
            body.append((0, L.comment(text), None))
        body.append(
            (
                0,
                L.assign(
                    "rec",
                    "REC",
                    L.call(self.owners["builder"], f"build_{self.n.s}", [L.var("payload")]),
                ),
                None,
            )
        )
        body.append(
            (
                0,
                L.assign("settings", "REC", L.call(self.owners["config"], "load_settings", [])),
                None,
            )
        )
        call = L.call(
            self.owners["service"], f"process_{self.n.s}", [L.var("rec"), L.var("settings")]
        )
        body.append((0, L.assign("result", "", call), "entry_call"))
        body.append((0, tail, None))
        doc = st.docs.get("entry", self.entry_fn["doc"])
        return Fn(self.entry_fn["name"], params, body, doc, entry=True)

    def noise_fn(self, role: str) -> Fn:
        """archive / notify: a call to another service, where the unrelated errors happen."""
        line = _NOISE_LINE[role][self.plan.lang]
        body = [(0, line, "noise"), (0, self.lang.ret(self.lang.var("response")), None)]
        name = f"{role}_{self.n.s}"
        doc = {"archive": "Copy the record to cold storage.", "notify": "Tell the customer."}[role]
        return Fn(name, [("rec", "REC")], body, doc)

    def extra_fn(self, role: str, name: str, st: State) -> Fn:
        label = st.labels.get(f"{role}:{name}", name.replace("_", " "))
        text = {
            "py": f"return f\"{label}: {{rec.get('id')}}\"",
            "rb": f'"{label}: #{{rec["id"]}}"',
            "php": f"return '{label}: ' . ($rec['id'] ?? '');",
            "js": f"return `{label}: ${{rec.id}}`;",
            "ts": f"return `{label}: ${{rec.id}}`;",
            "java": f'return "{label}: " + rec.get("id");',
            "kt": f'return "{label}: ${{rec["id"]}}"',
            "go": f'return fmt.Sprintf("{label}: %v", rec["id"])',
        }[self.plan.lang]
        doc = st.docs.get(f"{role}:{name}", f"A short label for logs ({name.replace('_', ' ')}).")
        return Fn(name, [("rec", "REC")], [(0, text, None)], doc)

    def main_fns(self, role: str, st: State) -> list[Fn]:
        if role in ("archive", "notify"):
            return [self.noise_fn(role)]
        if role == "helper" and self.plan.position not in ("callee", "binding"):
            return [self.extra_fn("helper", f"{self.n.s}_reference_code", st)]
        return [getattr(self, role)(st)]

    def render_role(self, role: str, st: State) -> list[Line]:
        fns = [self.extra_fn(role, name, st) for name in st.extras.get(role, [])]
        fns += self.main_fns(role, st)
        return _wrap(self, role, fns, st)

    def files(self, st: State) -> dict[str, list[Line]]:
        out = {self.paths[r]: self.render_role(r, st) for r in ROLES}
        out |= _support_files(self, st)
        if self.plan.position == "schema":
            out[self.paths["schema"]] = _schema_file(self, st)
        if self.plan.recovered:
            path, lines = _recover_file(self)
            out[path] = lines
        return out


# --- layout ---------------------------------------------------------------------------


def _paths(lang: str, n: Names, entry: str) -> dict[str, str]:
    s, p, pkg, S, P = n.s, n.p, n.pkg, n.S, n.P
    app = n.app.replace("-", "_")
    if lang == "py":
        e = {"web": f"{app}/{pkg}/views.py", "job": f"{app}/{pkg}/tasks.py", "cli": f"{app}/cli.py"}
        return {
            "entry": e[entry],
            "service": f"{app}/{pkg}/service.py",
            "calc": f"{app}/{pkg}/calculations.py",
            "helper": f"{app}/{pkg}/helpers.py",
            "builder": f"{app}/{pkg}/builders.py",
            "config": f"{app}/settings.py",
            "archive": f"{app}/{pkg}/archive.py",
            "notify": f"{app}/notifications.py",
        }
    if lang == "rb":
        e = {
            "web": f"app/controllers/{p}_controller.rb",
            "job": f"app/jobs/{s}_sync_job.rb",
            "cli": f"lib/{app}/cli/export_{p}.rb",
        }
        return {
            "entry": e[entry],
            "service": f"app/services/{s}_service.rb",
            "calc": f"app/services/{s}_calculator.rb",
            "helper": f"app/lib/{s}_helpers.rb",
            "builder": f"app/models/{s}_builder.rb",
            "config": "app/lib/app_settings.rb",
            "archive": f"app/services/{s}_archive.rb",
            "notify": f"app/services/{s}_notifier.rb",
        }
    if lang == "php":
        e = {
            "web": f"app/Http/Controllers/{S}Controller.php",
            "job": f"app/Jobs/{S}SyncJob.php",
            "cli": f"app/Console/Commands/Export{P}.php",
        }
        return {
            "entry": e[entry],
            "service": f"app/Services/{S}Service.php",
            "calc": f"app/Services/{S}Calculator.php",
            "helper": f"app/Support/{S}Helpers.php",
            "builder": f"app/Models/{S}Builder.php",
            "config": "app/Support/AppSettings.php",
            "archive": f"app/Services/{S}Archive.php",
            "notify": f"app/Services/{S}Notifier.php",
        }
    if lang == "js":
        d = p.replace("_", "-")
        e = {
            "web": f"src/{pkg}/routes.js",
            "job": f"src/workers/{d}-sync.js",
            "cli": f"bin/export-{d}.js",
        }
        return {
            "entry": e[entry],
            "service": f"src/{pkg}/service.js",
            "calc": f"src/{pkg}/calculations.js",
            "helper": f"src/{pkg}/helpers.js",
            "builder": f"src/{pkg}/builder.js",
            "config": "src/config.js",
            "archive": f"src/{pkg}/archive.js",
            "notify": "src/notifications.js",
        }
    if lang == "ts":
        d, ps = s.replace("_", "-"), p.replace("_", "-")
        e = {
            "web": f"src/{pkg}/{d}.controller.ts",
            "job": f"src/jobs/{d}-sync.processor.ts",
            "cli": f"src/cli/export-{ps}.ts",
        }
        return {
            "entry": e[entry],
            "service": f"src/{pkg}/{d}.service.ts",
            "calc": f"src/{pkg}/{d}.calculations.ts",
            "helper": f"src/{pkg}/{d}.helpers.ts",
            "builder": f"src/{pkg}/{d}.builder.ts",
            "config": "src/config/settings.ts",
            "archive": f"src/{pkg}/{d}.archive.ts",
            "notify": "src/notifications/notifier.ts",
        }
    if lang in ("java", "kt"):
        ext = "java" if lang == "java" else "kt"
        root = f"src/main/{'java' if lang == 'java' else 'kotlin'}/com/{n.org}/{pkg}"
        e = {"web": f"web/{S}Controller", "job": f"jobs/{S}SyncJob", "cli": f"cli/Export{P}Command"}
        rel = {
            "entry": e[entry],
            "service": f"service/{S}Service",
            "calc": f"service/{S}Calculator",
            "helper": f"support/{S}Helpers",
            "builder": f"model/{S}Builder",
            "config": "config/AppSettings",
            "archive": f"service/{S}Archive",
            "notify": f"service/{S}Notifier",
        }
        return {r: f"{root}/{v}.{ext}" for r, v in rel.items()}
    e = {"web": "handler.go", "job": "worker.go", "cli": "cli.go"}
    rel = {
        "entry": e[entry],
        "service": "service.go",
        "calc": "calculations.go",
        "helper": "helpers.go",
        "builder": "builder.go",
        "config": "config.go",
        "archive": "archive.go",
        "notify": "notify.go",
    }
    return {r: f"internal/{pkg}/{v}" for r, v in rel.items()}


def _owners(n: Names, entry: str, lang: str) -> dict[str, str]:
    S, P = n.S, n.P
    web = f"{P}Controller" if lang == "rb" else f"{S}Controller"  # Rails: plural controllers
    e = {"web": web, "job": f"{S}SyncJob", "cli": f"Export{P}Command"}
    return {
        "entry": e[entry],
        "service": f"{S}Service",
        "calc": f"{S}Calculator",
        "helper": f"{S}Helpers",
        "builder": f"{S}Builder",
        "config": "AppSettings",
        "archive": f"{S}Archive",
        "notify": f"{S}Notifier",
    }


def _entry_fn(lang: str, entry: str, n: Names) -> dict:
    s, p, _S, _P = n.s, n.p, n.S, n.P
    what = s.replace("_", " ")
    docs = {
        "web": f"POST /{p.replace('_', '-')}: create {article(what)}.",
        "job": f"Queue job: sync one {what} from the upstream system.",
        "cli": f"Command line: export {p.replace('_', ' ')} from a JSON file.",
    }
    rd = {
        ("py", "web"): ("create_" + s, [], "payload = request.get_json()", "return result, 201"),
        ("py", "job"): ("sync_" + s, [("payload", "")], "payload = dict(payload)", "return result"),
        ("py", "cli"): (
            "export_" + p,
            [("path", "")],
            "payload = json.loads(Path(path).read_text())",
            "click.echo(json.dumps(result))",
        ),
        ("rb", "web"): (
            "create",
            [],
            f"payload = params.require(:{s}).to_unsafe_h",
            "render json: result, status: :created",
        ),
        ("rb", "job"): ("perform", [("payload", "")], "payload = payload.to_h", "result"),
        ("rb", "cli"): (
            "export",
            [("path", "")],
            "payload = JSON.parse(File.read(path))",
            "say JSON.generate(result)",
        ),
        ("php", "web"): (
            "store",
            [("request", "")],
            "$payload = $request->all();",
            "return response()->json($result, 201);",
        ),
        ("php", "job"): ("handle", [], "$payload = $this->payload;", "return $result;"),
        ("php", "cli"): (
            "handle",
            [],
            "$payload = json_decode(file_get_contents($this->argument('file')), true);",
            "return self::SUCCESS;",
        ),
        ("js", "web"): (
            f"create_{s}",
            [("req", ""), ("res", "")],
            "const payload = req.body;",
            "res.status(201).json(result);",
        ),
        ("js", "job"): (f"sync_{s}", [("job", "")], "const payload = job.data;", "return result;"),
        ("js", "cli"): (
            f"export_{p}",
            [("file", "")],
            'const payload = JSON.parse(fs.readFileSync(file, "utf8"));',
            "console.log(JSON.stringify(result));",
        ),
        ("ts", "web"): (
            "create",
            [("payload", "REC")],
            "const input = { ...payload };",
            "return result;",
        ),
        ("ts", "job"): ("process", [("job", "")], "const payload = job.data;", "return result;"),
        ("ts", "cli"): (
            f"export_{p}",
            [("file", "STR")],
            'const payload = JSON.parse(readFileSync(file, "utf8"));',
            "console.log(JSON.stringify(result));",
        ),
        ("java", "web"): (
            "create",
            [("payload", "REC")],
            'log.info("create {}", payload.get("id"));',
            "return result;",
        ),
        ("java", "job"): (
            "on_message",
            [("payload", "REC")],
            'log.info("sync {}", payload.get("id"));',
            "return result;",
        ),
        ("java", "cli"): (
            "export",
            [("file", "STR")],
            "Map<String, Object> payload = Json.read(file);",
            "return result;",
        ),
        ("kt", "web"): (
            "create",
            [("payload", "REC")],
            'log.info("create {}", payload["id"])',
            "return result",
        ),
        ("kt", "job"): (
            "on_message",
            [("payload", "REC")],
            'log.info("sync {}", payload["id"])',
            "return result",
        ),
        ("kt", "cli"): (
            "export",
            [("file", "STR")],
            "val payload = Json.read(file)",
            "return result",
        ),
        ("go", "web"): (
            f"handle_create_{s}",
            [("payload", "REC")],
            'log.Printf("create %v", payload["id"])',
            "return result",
        ),
        ("go", "job"): (
            f"handle_sync_{s}",
            [("payload", "REC")],
            'log.Printf("sync %v", payload["id"])',
            "return result",
        ),
        ("go", "cli"): (
            f"run_export_{p}",
            [("payload", "REC")],
            'log.Printf("export %v", payload["id"])',
            "return result",
        ),
    }[(lang, entry)]
    name, params, read, tail = rd
    return {"name": name, "params": params, "read": read, "tail": tail, "doc": docs[entry]}


_NOISE_LINE = {
    "archive": {
        "py": "response = http.post(ARCHIVE_URL, json=rec, timeout=5)",
        "rb": 'response = Net::HTTP.post(ARCHIVE_URI, rec.to_json, "Content-Type" => "application/json")',
        "php": "$response = Http::timeout(5)->post(config('services.archive.url'), $rec);",
        "js": "const response = await axios.post(ARCHIVE_URL, rec, { timeout: 5000 });",
        "ts": "const response = await axios.post(ARCHIVE_URL, rec, { timeout: 5000 });",
        "java": "Object response = http.postForObject(ARCHIVE_URL, rec, Object.class);",
        "kt": "val response = http.postForObject(ARCHIVE_URL, rec, Any::class.java)",
        "go": "response := mustPost(archiveURL, rec)",
    },
    "notify": {
        "py": 'response = mailer.send(rec["email"], template="receipt")',
        "rb": 'response = Mailer.deliver!(rec.fetch("email"), template: "receipt")',
        "php": "$response = Mail::to($rec['email'])->send(new Receipt($rec));",
        "js": 'const response = await mailer.send(rec.email, "receipt");',
        "ts": 'const response = await mailer.send(rec.email, "receipt");',
        "java": 'Object response = mailer.send((String) rec.get("email"), "receipt");',
        "kt": 'val response = mailer.send(rec["email"] as String, "receipt")',
        "go": 'response := mustSend(rec["email"], "receipt")',
    },
}


def _wrap(prog: Program, role: str, fns: list[Fn], st: State) -> list[Line]:
    """The file around its functions: package, imports, class, module."""
    L, n, lang = prog.lang, prog.n, prog.plan.lang
    owner = prog.owners[role]
    header = st.header.get(role)
    out: list[Line] = []
    body: list[Line] = []
    for i, fn in enumerate(fns):
        if i:
            body.append(("", None))
            if lang == "py":
                body.append(("", None))
        body += _function(prog, fn, owner, role)
    if lang == "py":
        doc = header or f"{owner}: {role} of the {n.p.replace('_', ' ')} package."
        out += [(f'"""{doc}"""', None), ("", None)]
        out += [(imp, None) for imp in _py_imports(prog, role, st)]
        out += [("", None), ("", None)]
        if role == "service" and prog.plan.chained:
            out += [(f"class {n.S}Error(RuntimeError):", None)]
            out += [
                (
                    f'    """{article(n.s.replace("_", " ")).capitalize()} could not be processed."""',
                    None,
                )
            ]
            out += [("", None), ("", None)]
        return out + body
    if lang == "rb":
        out += [("# frozen_string_literal: true", None), ("", None)]
        if header:
            out += [(f"# {header}", None)]
        kw = "class" if role == "entry" else "module"
        parent = {"web": " < ApplicationController", "job": " < ApplicationJob", "cli": " < Thor"}
        out += [(f"{kw} {owner}{parent[prog.plan.entry] if role == 'entry' else ''}", None)]
        if role == "service" and prog.plan.chained:
            out += [(f"  class {n.S}Error < StandardError; end", None), ("", None)]
        return [*out, *body, ("end", None)]
    if lang == "php":
        ns = {
            "entry": {
                "web": "App\\Http\\Controllers",
                "job": "App\\Jobs",
                "cli": "App\\Console\\Commands",
            }[prog.plan.entry],
            "service": "App\\Services",
            "calc": "App\\Services",
            "helper": "App\\Support",
            "builder": "App\\Models",
            "config": "App\\Support",
            "archive": "App\\Services",
            "notify": "App\\Services",
        }[role]
        out += [("<?php", None), ("", None), ("declare(strict_types=1);", None), ("", None)]
        out += [(f"namespace {ns};", None), ("", None)]
        for r in ("service", "calc", "helper", "builder", "config"):
            if r != role:
                out += [(f"use {_php_ns(prog, r)}\\{prog.owners[r]};", None)]
        out += [("", None)]
        if header:
            out += [(f"/** {header} */", None)]
        out += [(f"final class {owner}", None), ("{", None)]
        return [*out, *body, ("}", None)]
    if lang in ("js", "ts"):
        if header:
            out += [(f"// {header}", None)]
        out += [(imp, None) for imp in _js_imports(prog, role)]
        out += [("", None)]
        if lang == "js":
            names = ", ".join(L.fname(f.name) for f in fns)
            return [*out, *body, ("", None), (f"module.exports = {{ {names} }};", None)]
        return out + body
    if lang in ("java", "kt"):
        pkg = ".".join(prog.paths[role].split("/")[3:-1])
        semi = ";" if lang == "java" else ""
        out += [(f"package {pkg}{semi}", None), ("", None)]
        imports = ["java.util.List", "java.util.Map", "java.util.HashMap", "java.util.Objects"]
        imports += ["java.math.BigDecimal", "java.time.LocalDate", "java.time.OffsetDateTime"]
        imports += ["java.time.format.DateTimeFormatter"]
        if role == "builder" and prog.plan.position == "schema":
            imports += {
                "java": ["com.fasterxml.jackson.databind.ObjectMapper"],
                "kt": ["kotlinx.serialization.json.decodeFromJsonElement"],
            }[lang]
        for r in ("service", "calc", "helper", "builder", "config"):
            rp = ".".join(prog.paths[r].split("/")[3:-1])
            if rp != pkg:
                imports.append(f"{rp}.{prog.owners[r]}")
        out += [(f"import {i}{semi}", None) for i in sorted(set(imports))]
        out += [("", None)]
        if header:
            out += [(f"/** {header} */", None)]
        if lang == "java":
            anno = {
                "web": "@RestController",
                "job": "@Component",
                "cli": '@Command(name = "export")',
            }
            if role == "entry":
                out += [(anno[prog.plan.entry], None)]
            out += [(f"public final class {owner} {{", None)]
        else:
            out += [(f"object {owner} {{", None)]
        return [*out, *body, ("}", None)]
    # go
    out += [(f"package {n.pkg}", None), ("", None)]
    out += [("import (", None)]
    for imp in ('"fmt"', '"log"', '"strings"'):
        out += [(f"\t{imp}", None)]
    out += [(")", None), ("", None)]
    if header:
        out += [(f"// {header}", None), ("", None)]
    return out + body


def _schema_path(lang: str, n: Names) -> str:
    app, d = n.app.replace("-", "_"), n.s.replace("_", "-")
    return {
        "py": f"{app}/{n.pkg}/schemas.py",
        "rb": f"app/models/{n.s}_payload.rb",
        "php": f"app/Models/{n.S}Payload.php",
        "js": f"src/{n.pkg}/payload.js",
        "ts": f"src/{n.pkg}/{d}.payload.ts",
        "java": f"src/main/java/com/{n.org}/{n.pkg}/model/{n.S}Payload.java",
        "kt": f"src/main/kotlin/com/{n.org}/{n.pkg}/model/{n.S}Payload.kt",
        "go": f"internal/{n.pkg}/payload.go",
    }[lang]


def _schema_file(prog: Program, st: State) -> list[Line]:
    """The wire type the payload is decoded into; the customer's serialized name is the fault
    (snake case as the upstream API sends it, camel case after the faulty change)."""
    n, lang = prog.n, prog.plan.lang
    S, what = n.S, article(n.s.replace("_", " "))
    wire = prog.expr("", st.bad)
    pkg = ".".join(prog.paths["schema"].split("/")[3:-1])
    F = "@FAULT@"
    text = {
        "py": [
            f'"""Wire format of the {n.p.replace("_", " ")} the upstream API sends."""',
            "",
            "from pydantic import BaseModel, ConfigDict, Field",
            "",
            "",
            f"class {S}Payload(BaseModel):",
            f'    """{what.capitalize()} as the upstream API sends it."""',
            "",
            '    model_config = ConfigDict(extra="ignore")',
            "",
            "    id: str",
            "    region: str | None = None",
            f'    customer_ref: str | None = Field(default=None, alias="{wire}"){F}',
            "    issued_at: str | None = None",
        ],
        "rb": [
            "# frozen_string_literal: true",
            "",
            f"# {what.capitalize()} as the upstream API sends it: attribute => key of the JSON body.",
            f"class {S}Payload",
            "  ATTRIBUTES = {",
            '    id: "id",',
            '    region: "region",',
            f'    customer_ref: "{wire}",{F}',
            '    issued_at: "issued_at"',
            "  }.freeze",
            "",
            "  def self.from_json(body)",
            "    ATTRIBUTES.to_h { |attr, key| [attr.to_s, body[key]] }",
            "  end",
            "end",
        ],
        "php": [
            "<?php",
            "",
            "declare(strict_types=1);",
            "",
            "namespace App\\Models;",
            "",
            f"/** {what.capitalize()} as the upstream API sends it. */",
            f"final class {S}Payload",
            "{",
            "    public function __construct(",
            "        public readonly string $id,",
            "        public readonly ?string $region,",
            "        public readonly ?string $customerRef,",
            "        public readonly ?string $issuedAt,",
            "    ) {",
            "    }",
            "",
            "    /** Decode the JSON body: each property from its key. */",
            "    public static function fromArray(array $data): self",
            "    {",
            "        return new self(",
            "            id: (string) $data['id'],",
            "            region: $data['region'] ?? null,",
            f"            customerRef: $data['{wire}'] ?? null,{F}",
            "            issuedAt: $data['issued_at'] ?? null,",
            "        );",
            "    }",
            "",
            "    public function toRecord(): array",
            "    {",
            "        return [",
            "            'id' => $this->id,",
            "            'region' => $this->region,",
            "            'customer_ref' => $this->customerRef,",
            "            'issued_at' => $this->issuedAt,",
            "        ];",
            "    }",
            "}",
        ],
        "js": [
            "/** Key of the upstream JSON body each field of the record is read from. */",
            "const WIRE_NAMES = {",
            '  id: "id",',
            '  region: "region",',
            f'  customer_ref: "{wire}",{F}',
            '  issued_at: "issued_at",',
            "};",
            "",
            "/** Decode the upstream JSON body into a record. */",
            "function fromJson(body) {",
            "  return Object.fromEntries(",
            "    Object.entries(WIRE_NAMES).map(([field, key]) => [field, body[key]]),",
            "  );",
            "}",
            "",
            "module.exports = { WIRE_NAMES, fromJson };",
        ],
        "ts": [
            f"/** {what.capitalize()} as the upstream API sends it. */",
            f"export interface {S}Payload {{",
            "  id: string;",
            "  region?: string;",
            "  customerRef?: string;",
            "  issuedAt?: string;",
            "}",
            "",
            f"const WIRE_NAMES: Record<keyof {S}Payload, string> = {{",
            '  id: "id",',
            '  region: "region",',
            f'  customerRef: "{wire}",{F}',
            '  issuedAt: "issued_at",',
            "};",
            "",
            "/** Decode the upstream JSON body: each field from its key. */",
            f"export function fromJson(body: Record<string, unknown>): {S}Payload {{",
            "  const entries = Object.entries(WIRE_NAMES).map(([field, key]) => [field, body[key]]);",
            f"  return Object.fromEntries(entries) as {S}Payload;",
            "}",
        ],
        "java": [
            f"package {pkg};",
            "",
            "import com.fasterxml.jackson.annotation.JsonIgnoreProperties;",
            "import com.fasterxml.jackson.annotation.JsonProperty;",
            "",
            f"/** {what.capitalize()} as the upstream API sends it. */",
            "@JsonIgnoreProperties(ignoreUnknown = true)",
            f"public record {S}Payload(",
            '    @JsonProperty("id") String id,',
            '    @JsonProperty("region") String region,',
            f'    @JsonProperty("{wire}") String customerRef,{F}',
            '    @JsonProperty("issued_at") String issuedAt) {',
            "}",
        ],
        "kt": [
            f"package {pkg}",
            "",
            "import kotlinx.serialization.SerialName",
            "import kotlinx.serialization.Serializable",
            "import kotlinx.serialization.json.Json",
            "",
            "/** Upstream bodies carry more keys than the application reads. */",
            "val WIRE_JSON = Json { ignoreUnknownKeys = true }",
            "",
            f"/** {what.capitalize()} as the upstream API sends it. */",
            "@Serializable",
            f"data class {S}Payload(",
            '    @SerialName("id") val id: String,',
            '    @SerialName("region") val region: String? = null,',
            f'    @SerialName("{wire}") val customerRef: String? = null,{F}',
            '    @SerialName("issued_at") val issuedAt: String? = null,',
            ")",
        ],
        "go": [
            f"package {n.pkg}",
            "",
            'import "encoding/json"',
            "",
            f"// {S}Payload is {what} as the upstream API sends it.",
            f"type {S}Payload struct {{",
            '\tID          string  `json:"id"`',
            '\tRegion      *string `json:"region"`',
            f'\tCustomerRef *string `json:"{wire}"`{F}',
            '\tIssuedAt    string  `json:"issued_at"`',
            "}",
            "",
            "// decodePayload decodes the JSON body the upstream API sent.",
            f"func decodePayload(body map[string]any) ({S}Payload, error) {{",
            f"\tvar p {S}Payload",
            "\traw, err := json.Marshal(body)",
            "\tif err != nil {",
            "\t\treturn p, err",
            "\t}",
            "\terr = json.Unmarshal(raw, &p)",
            "\treturn p, err",
            "}",
        ],
    }[lang]
    return [(t.replace(F, ""), "fault" if F in t else None) for t in text]


def _recover_file(prog: Program) -> tuple[str, list[Line]]:
    """Go: the deferred handler that recovers a panic and reports it (the Go SDK's frames of it
    come after the runtime's, at the top of the stack)."""
    n = prog.n
    if prog.plan.entry == "web":
        text = [
            (f"package {n.pkg}", None),
            ("", None),
            ("import (", None),
            ('\t"log"', None),
            ("", None),
            ('\t"github.com/getsentry/sentry-go"', None),
            (")", None),
            ("", None),
            ("// withRecover reports a handler's panic to Sentry and answers 500 instead.", None),
            ("func withRecover(next func(map[string]any) any) func(map[string]any) any {", None),
            ("\treturn func(payload map[string]any) (result any) {", None),
            ("\t\tdefer func() {", None),
            ("\t\t\tif err := recover(); err != nil {", None),
            ("\t\t\t\tsentry.CurrentHub().Recover(err)", "recover"),
            ('\t\t\t\tlog.Printf("handler panicked: %v", err)', None),
            ('\t\t\t\tresult = map[string]any{"status": 500}', None),
            ("\t\t\t}", None),
            ("\t\t}()", None),
            ("\t\treturn next(payload)", "next"),
            ("\t}", None),
            ("}", None),
        ]
        return f"internal/{n.pkg}/middleware.go", text
    text = [
        (f"package {n.pkg}", None),
        ("", None),
        ("import (", None),
        ('\t"log"', None),
        ("", None),
        ('\t"github.com/getsentry/sentry-go"', None),
        (")", None),
        ("", None),
        ("// recoverPanic reports a panic of the running job to Sentry; the worker goes on.", None),
        ("func recoverPanic() {", None),
        ("\tif err := recover(); err != nil {", None),
        ("\t\thub := sentry.CurrentHub().Clone()", None),
        ("\t\thub.Recover(err)", "recover"),
        ('\t\tlog.Printf("job panicked: %v", err)', None),
        ("\t}", None),
        ("}", None),
    ]
    return f"internal/{n.pkg}/recover.go", text


def _php_ns(prog: Program, role: str) -> str:
    path = prog.paths[role]
    parts = path.split("/")[:-1]
    return "App\\" + "\\".join(parts[1:])


def _py_imports(prog: Program, role: str, st: State) -> list[str]:
    n = prog.n
    base = {
        "entry": {
            "web": ["from flask import request"],
            "job": ["from celery import shared_task"],
            "cli": ["import json", "from pathlib import Path", "", "import click"],
        }[prog.plan.entry],
        "calc": ["from datetime import date"],
        "helper": ["from datetime import datetime"],
        "builder": ["from datetime import datetime"],
        "config": ["import os"],
        "archive": ["from .http import ARCHIVE_URL, http"],
        "notify": ["from .mail import mailer"],
    }.get(role, [])
    app = n.app.replace("-", "_")
    calls = {
        "entry": [
            ("builder", f"build_{n.s}"),
            ("config", "load_settings"),
            ("service", f"process_{n.s}"),
        ],
        "service": [("calc", prog.calc_fn)],
        "calc": [("helper", prog.helper_fn)] if prog.plan.position in ("callee", "binding") else [],
        "builder": [("schema", f"{n.S}Payload")] if prog.plan.position == "schema" else [],
    }.get(role, [])
    if role == "calc" and st.calc_log:
        base.insert(0, "import logging")
    for r, fn in calls:
        module = prog.paths[r][:-3].replace("/", ".")
        if not module.startswith(app):
            module = f"{app}.{module}"
        base.append(f"from {module} import {fn}")
    return base


def _js_imports(prog: Program, role: str) -> list[str]:
    n, lang = prog.n, prog.plan.lang
    calls = {
        "entry": [
            ("builder", f"build_{n.s}"),
            ("config", "load_settings"),
            ("service", f"process_{n.s}"),
        ],
        "service": [("calc", prog.calc_fn)],
        "calc": [("helper", prog.helper_fn)] if prog.plan.position in ("callee", "binding") else [],
        "builder": [("schema", "from_json")] if prog.plan.position == "schema" else [],
    }.get(role, [])
    out = []
    here = prog.paths[role].split("/")[:-1]
    for r, fn in calls:
        there = prog.paths[r].rsplit(".", 1)[0].split("/")
        common = 0
        while common < min(len(here), len(there) - 1) and here[common] == there[common]:
            common += 1
        rel = "/".join([".."] * (len(here) - common) + there[common:])
        rel = rel if rel.startswith("..") else "./" + rel
        name = prog.lang.fname(fn)
        if lang == "js":
            out.append(f'const {{ {name} }} = require("{rel}");')
        else:
            out.append(f'import {{ {name} }} from "{rel}";')
    if lang == "ts" and role in ("calc", "service", "helper", "builder"):
        out.append(f'import type {{ Line }} from "./{n.s.replace("_", "-")}.types";')
    return out


def _function(prog: Program, fn: Fn, owner: str, role: str) -> list[Line]:
    L, lang = prog.lang, prog.plan.lang
    if not fn.entry:
        return L.function(fn, owner)
    # Framework entry points: instance methods, decorators, classes.
    name = L.fname(fn.name)
    params = ", ".join(L.param(n, t) for n, t in fn.params)
    ind = L.indent
    out: list[Line] = []
    if lang == "py":
        deco = {
            "web": f'@bp.post("/{prog.n.p}")',
            "job": "@shared_task(bind=False)",
            "cli": "@click.command()",
        }
        out += [(deco[prog.plan.entry], None)]
        if prog.plan.entry == "cli":
            out += [('@click.argument("path")', None)]
        out += [(f"def {name}({params}):", "def"), (f'{ind}"""{fn.doc}"""', "doc")]
        lead = ""
    elif lang == "rb":
        lead = ind
        out += [
            (f"{lead}# {fn.doc}", "doc"),
            (f"{lead}def {name}{'(' + params + ')' if params else ''}", "def"),
        ]
    elif lang == "php":
        lead = ind
        ps = "Request $request" if params else ""
        out += [
            (f"{lead}/** {fn.doc} */", "doc"),
            (f"{lead}public function {name}({ps}): mixed", "def"),
            (f"{lead}{{", None),
        ]
    elif lang == "js":
        lead = ""
        out += [(f"/** {fn.doc} */", "doc"), (f"async function {name}({params}) {{", "def")]
    elif lang == "ts":
        lead = ind
        cls = prog.owners["entry"]
        deco = {"web": "@Controller", "job": "@Processor", "cli": "@Command"}[prog.plan.entry]
        out += [(f'{deco}("{prog.n.p.replace("_", "-")}")', None), (f"export class {cls} {{", None)]
        meth = {"web": "@Post()", "job": "@Process()", "cli": "@Action()"}[prog.plan.entry]
        out += [(f"{lead}/** {fn.doc} */", "doc"), (f"{lead}{meth}", None)]
        out += [(f"{lead}async {name}({params}): Promise<unknown> {{", "def")]
    elif lang == "java":
        lead = ind
        anno = {
            "web": f'@PostMapping("/{prog.n.p}")',
            "job": '@KafkaListener(topics = "sync")',
            "cli": "@Override",
        }
        out += [(f"{lead}/** {fn.doc} */", "doc"), (f"{lead}{anno[prog.plan.entry]}", None)]
        out += [(f"{lead}public Object {name}({params}) {{", "def")]
    elif lang == "kt":
        lead = ind
        anno = {
            "web": f'@PostMapping("/{prog.n.p}")',
            "job": '@KafkaListener(topics = ["sync"])',
            "cli": '@Suppress("unused")',
        }
        kw = "suspend fun" if prog.plan.entry == "job" else "fun"
        out += [(f"{lead}/** {fn.doc} */", "doc"), (f"{lead}{anno[prog.plan.entry]}", None)]
        out += [(f"{lead}{kw} {name}({params}): Any? {{", "def")]
    else:
        lead = ""
        out += [
            (f"// {name} {_lower_first(fn.doc)}", "doc"),
            (f"func {name}({params}) any {{", "def"),
        ]
    for level, text, tag in fn.body:
        out.append((lead + ind + ind * level + text, tag))
    if lang == "rb":
        out.append((lead + "end", None))
    elif lang != "py":
        out.append((lead + "}", None))
    if lang == "ts":
        out.append(("}", None))
    return out


def _support_files(prog: Program, st: State) -> dict[str, list[Line]]:
    n, lang = prog.n, prog.plan.lang
    files: dict[str, list[str]] = {}
    app = n.app
    files["README.md"] = [
        f"# {app}",
        "",
        f"The {n.p.replace('_', ' ')} service of {n.org.capitalize()}.",
        "",
        "Run the tests before opening a pull request.",
    ]
    files["CHANGELOG.md"] = ["# Changelog", "", *[f"- {c}" for c in reversed(st.changelog)]]
    files["docs/architecture.md"] = [
        "# Architecture",
        "",
        f"Requests enter through `{prog.paths['entry']}`, are built into a record by",
        f"`{prog.paths['builder']}` and processed by `{prog.paths['service']}`.",
        "Settings come from the environment, read once at start.",
    ]
    if prog.plan.contract and prog.plan.contract_in_readme:
        files["README.md"] += ["", *_contract(prog)[2:]]
    elif prog.plan.contract:
        files[f"docs/{n.p}.md"] = _contract(prog) + st.doc_notes.get("contract", [])
    files["docs/operations.md"] = [
        "# Operations",
        "",
        "Deploys go out from main; every release is tagged with the commit SHA.",
        *st.doc_notes.get("operations", []),
    ]
    manifest = {
        "py": ("pyproject.toml", ["[project]", f'name = "{app}"', f'version = "{st.version}"']),
        "rb": (
            "Gemfile",
            ['source "https://rubygems.org"', "", f"# {app} {st.version}", 'gem "rails", "~> 7.1"'],
        ),
        "php": (
            "composer.json",
            ["{", f'    "name": "{n.org}/{app}",', f'    "version": "{st.version}"', "}"],
        ),
        "js": ("package.json", ["{", f'  "name": "{app}",', f'  "version": "{st.version}"', "}"]),
        "ts": ("package.json", ["{", f'  "name": "{app}",', f'  "version": "{st.version}"', "}"]),
        "java": (
            "pom.xml",
            [
                "<project>",
                f"  <artifactId>{app}</artifactId>",
                f"  <version>{st.version}</version>",
                "</project>",
            ],
        ),
        "kt": ("build.gradle.kts", [f'group = "com.{n.org}"', f'version = "{st.version}"']),
        "go": ("go.mod", [f"module github.com/{n.org}/{app}", "", "go 1.22"]),
    }[lang]
    files[manifest[0]] = manifest[1]
    if lang == "go":
        files[f"internal/{n.pkg}/model.go"] = _GO_MODEL.format(pkg=n.pkg).splitlines()
    if lang == "ts":
        files[f"src/{n.pkg}/{n.s.replace('_', '-')}.types.ts"] = [
            "export interface Line {",
            "  sku: string;",
            "  qty: number;",
            "  status: string;",
            "}",
        ]
    return {path: [(t, None) for t in lines] for path, lines in files.items()}


def _contract(prog: Program) -> list[str]:
    n, k = prog.n, prog.kind
    what = n.s.replace("_", " ")
    calc = prog.lang.fname(prog.calc_fn)
    rules = {
        "null_guard": f"A {what} without a region is routed to `{prog.plan.dflt}`: `region` may be absent and must never reach `{calc}` as null.",
        "config_key": f"The billing region comes from `BILLING_REGION`; `{calc}` needs a region and the settings must always carry one.",
        "off_by_one": f"`{calc}` reads the last line of the {what}: the index of the last line is the number of lines minus one.",
        "div_zero": f"A {what} may have no lines; `{calc}` then splits over one part, never over zero.",
        "default_changed": f"When `split_ways` is not given, a {what} is split in one way (the whole). Zero ways is never valid.",
        "type_changed": "`net_amount` and the `amount` the calculation receives are numbers (decimal), never formatted strings; formatting happens only when rendering.",
        "format_changed": f"Dates handed between modules are ISO 8601 (`YYYY-MM-DD`); `{calc}` parses the due date as ISO.",
        "key_renamed": f"The customer reference of a {what} is a map with the key `customer_id` (snake case), as the billing API documents it.",
        "filter_changed": "Only void lines are left out when looking for the first line; pending and paid lines count.",
        "wire_name": f"The upstream API sends the customer of {article(what)} as `customer_id` (snake case); `{n.S}Payload` decodes it into `customer_ref`, which `{calc}` needs and is never null.",
    }[k.name]
    return [f"# {n.P.replace('_', ' ')}", "", "## Contract", "", rules, ""]


_GO_MODEL = """package {pkg}

import (
	"os"
	"strconv"
	"strings"
	"time"
)

func ptr(s string) *string {{ return &s }}

func firstNonNil(values ...*string) *string {{
	for _, v := range values {{
		if v != nil {{
			return v
		}}
	}}
	return nil
}}

func strPtr(m map[string]any, key string) *string {{
	if v, ok := m[key].(string); ok {{
		return &v
	}}
	return nil
}}

func strOr(m map[string]any, key, fallback string) string {{
	if v, ok := m[key].(string); ok {{
		return v
	}}
	return fallback
}}

func intOr(m map[string]any, key string, fallback int) int {{
	if v, ok := m[key].(string); ok {{
		if n, err := strconv.Atoi(v); err == nil {{
			return n
		}}
	}}
	return fallback
}}

func sumQty(lines []map[string]any) int {{
	total := 0
	for _, l := range lines {{
		total += l["qty"].(int)
	}}
	return total
}}

func filterLines(lines []map[string]any, keep func(map[string]any) bool) []map[string]any {{
	var out []map[string]any
	for _, l := range lines {{
		if keep(l) {{
			out = append(out, l)
		}}
	}}
	return out
}}

func toFloat(v any) float64 {{
	f, _ := strconv.ParseFloat(strings.TrimSpace(fmt.Sprint(v)), 64)
	return f
}}

func toTime(v string) time.Time {{
	t, _ := time.Parse(time.RFC3339, v)
	return t
}}

func mustParseDate(layout, value string) time.Time {{
	t, err := time.Parse(layout, value)
	if err != nil {{
		panic(err)
	}}
	return t
}}

func envMap() map[string]any {{
	out := map[string]any{{}}
	for _, kv := range os.Environ() {{
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}}
	return out
}}
"""


def article(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun
