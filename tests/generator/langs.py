"""The eight languages: file layout, syntax, and the frames each platform's Sentry SDK sends."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A rendered line: (text, tag). Tags mark the lines the ground truth and the frames point at.
Line = tuple[str, str | None]


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)


def pascal(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_"))


@dataclass
class Fn:
    """A function: its snake-case name, typed parameters, body of (indent, text, tag)."""

    name: str
    params: list[tuple[str, str]]  # (snake name, type key)
    body: list[tuple[int, str, str | None]]
    doc: str
    entry: bool = False  # a framework entry point (controller action, job, command)


@dataclass
class Lang:
    key: str
    platform: str
    sdk: str
    indent: str
    semi: bool
    types: dict[str, str] = field(default_factory=dict)

    # --- names -----------------------------------------------------------------------
    def fname(self, snake: str) -> str:
        return snake if self.key in ("py", "rb") else camel(snake)

    def var(self, snake: str) -> str:
        name = snake if self.key in ("py", "rb") else camel(snake)
        return "$" + name if self.key == "php" else name

    def typ(self, type_key: str) -> str:
        return self.types.get(type_key, "")

    def end(self, text: str) -> str:
        return text + ";" if self.semi and not text.endswith((";", "{", "}")) else text

    # --- statements ------------------------------------------------------------------
    def assign(self, snake: str, type_key: str, expr: str) -> str:
        v = self.var(snake)
        t = self.typ(type_key)
        k = self.key
        if k in ("py", "rb", "php"):
            return self.end(f"{v} = {expr}")
        if k in ("js",):
            return f"const {v} = {expr};"
        if k == "ts":
            return f"const {v}: {t} = {expr};" if t else f"const {v} = {expr};"
        if k == "java":
            return f"{t or 'var'} {v} = {expr};"
        if k == "kt":
            return f"val {v}: {t} = {expr}" if t else f"val {v} = {expr}"
        if t in ("any",):
            return f"var {v} {t} = {expr}"
        return f"{v} := {expr}"

    def ret(self, expr: str) -> str:
        return self.end(f"return {expr}")

    def comment(self, text: str) -> str:
        return ("# " if self.key in ("py", "rb") else "// ") + text

    def fetch(self, snake: str, type_key: str, mapvar: str, key: str) -> str:
        """Read ``key`` of the map ``mapvar`` into a local of the given type."""
        m, k = self.var(mapvar), key
        fallback = {"LIST": "[]", "MAP": "{}"}.get(type_key)
        if self.key == "py":
            expr = f'{m}.get("{k}")' + (f" or {fallback}" if fallback else "")
        elif self.key == "rb":
            expr = f'{m}["{k}"]' + (f" || {fallback}" if fallback else "")
        elif self.key == "php":
            expr = f"{m}['{k}'] ?? " + ("[]" if fallback else "null")
        elif self.key in ("js", "ts"):
            expr = f"{m}.{k}" + (f" ?? {fallback}" if fallback else "")
        elif self.key == "java":
            t = self.typ(type_key)
            expr = f'{m}.get("{k}")' if type_key == "NUM" else f'({t}) {m}.get("{k}")'
            if type_key == "MAP":
                expr = f'({t}) {m}.getOrDefault("{k}", Map.of())'
        elif self.key == "kt":
            t = self.typ(type_key)
            expr = f'{m}["{k}"]' if type_key == "NUM" else f'{m}["{k}"] as {t}'
            if type_key == "MAP":
                expr = f'({m}["{k}"] as? Map<String, Any?>).orEmpty()'
        else:  # go
            t = self.typ(type_key)
            if type_key == "NUM":
                return f'{self.var(snake)} := {m}["{k}"]'
            return f'{self.var(snake)}, _ := {m}["{k}"].({t})'
        return self.assign(snake, type_key if self.key in ("java", "ts") else "", expr)

    def call(self, role_cls: str, snake: str, args: list[str]) -> str:
        """A call of another file's function, as this language spells it."""
        name = self.fname(snake)
        a = ", ".join(args)
        if self.key in ("java", "kt", "rb"):
            return f"{role_cls}.{name}({a})"
        if self.key == "php":
            return f"{role_cls}::{name}({a})"
        return f"{name}({a})"

    def map_literal(
        self, entries: list[tuple[str, str, str | None]]
    ) -> list[tuple[int, str, str | None]]:
        """``return {key: expr, ...}`` over several lines, one entry a line (taggable)."""
        k = self.key
        opener, closer, sep = {
            "py": ("return {", "}", ": "),
            "rb": ("{", "}", " => "),
            "php": ("return [", "];", " => "),
            "js": ("return {", "};", ": "),
            "ts": ("return {", "};", ": "),
            "java": ("Map<String, Object> out = new HashMap<>();", "return out;", ""),
            "kt": ("return mapOf(", ")", " to "),
            "go": ("return map[string]any{", "}", ": "),
        }[k]
        rows: list[tuple[int, str, str | None]] = [(0, opener, None)]
        for key, expr, tag in entries:
            if k == "java":
                rows.append((0, f'out.put("{key}", {expr});', tag))
            elif k == "rb":
                rows.append((1, f'"{key}"{sep}{expr},', tag))
            elif k == "php":
                rows.append((1, f"'{key}'{sep}{expr},", tag))
            elif k in ("js", "ts"):
                rows.append((1, f"{key}{sep}{expr},", tag))
            else:
                rows.append((1, f'"{key}"{sep}{expr},', tag))
        rows.append((0, closer, None))
        return rows

    def rethrow(
        self,
        body: list[tuple[int, str, str | None]],
        message: str,
        err_cls: str,
        suppressed: bool = False,
    ) -> list[tuple[int, str, str | None]]:
        """Wrap ``body`` so that a failure is re-raised as ``err_cls`` chained to its cause, or,
        when ``suppressed``, with the cause's text only (``raise … from None``, no cause)."""
        k = self.key
        inner = [(i + 1, t, g) for i, t, g in body]
        if suppressed:
            raise_line = {
                "py": f'raise {err_cls}(f"{message}: {{exc}}") from None',
                "rb": f'raise {err_cls}, "{message}: #{{e.message}}", cause: nil',
                "php": f'throw new \\RuntimeException("{message}: " . $e->getMessage());',
                "js": f"throw new {err_cls}(`{message}: ${{err.message}}`);",
                "ts": f"throw new {err_cls}(`{message}: ${{(err as Error).message}}`);",
                "java": f'throw new {err_cls}("{message}: " + e.getMessage());',
                "kt": f'throw {err_cls}("{message}: ${{e.message}}")',
            }[k]
            rows = self.rethrow(body, message, err_cls)
            return [(i, raise_line if g == "rethrow" else t, g) for i, t, g in rows]
        if k == "py":
            return [
                (0, "try:", None),
                *inner,
                (
                    0,
                    "except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError,"
                    " AttributeError) as exc:",
                    None,
                ),
                (1, f'raise {err_cls}(f"{message}") from exc', "rethrow"),
            ]
        if k == "rb":
            return [
                (0, "begin", None),
                *inner,
                (0, "rescue StandardError => e", None),
                (1, f'raise {err_cls}, "{message}: #{{e.message}}"', "rethrow"),
                (0, "end", None),
            ]
        if k == "php":
            return [
                (0, "try {", None),
                *inner,
                (0, "} catch (\\Throwable $e) {", None),
                (1, f'throw new \\RuntimeException("{message}", 0, $e);', "rethrow"),
                (0, "}", None),
            ]
        if k in ("js", "ts"):
            return [
                (0, "try {", None),
                *inner,
                (0, "} catch (err) {", None),
                (1, f"throw new {err_cls}(`{message}`, {{ cause: err }});", "rethrow"),
                (0, "}", None),
            ]
        if k == "java":
            return [
                (0, "try {", None),
                *inner,
                (0, "} catch (RuntimeException e) {", None),
                (1, f'throw new {err_cls}("{message}", e);', "rethrow"),
                (0, "}", None),
            ]
        if k == "kt":
            return [
                (0, "try {", None),
                *inner,
                (0, "} catch (e: RuntimeException) {", None),
                (1, f'throw {err_cls}("{message}", e)', "rethrow"),
                (0, "}", None),
            ]
        raise ValueError("no chained exceptions in go")

    # --- functions and files -----------------------------------------------------------
    def param(self, snake: str, type_key: str) -> str:
        v, t = self.var(snake), self.typ(type_key)
        if self.key in ("java",):
            return f"{t} {v}"
        if self.key in ("kt", "ts"):
            return f"{v}: {t}"
        if self.key == "go":
            return f"{v} {t}"
        return v

    def function(self, fn: Fn, owner: str) -> list[Line]:
        name = self.fname(fn.name)
        params = ", ".join(self.param(n, t) for n, t in fn.params)
        ind = self.indent
        k = self.key
        lead = ind if k in ("rb", "php", "java", "kt") else ""
        out: list[Line] = []
        if k == "py":
            out += [(f"def {name}({params}):", "def"), (f'{ind}"""{fn.doc}"""', "doc")]
        elif k == "rb":
            out += [(f"{lead}# {fn.doc}", "doc"), (f"{lead}def self.{name}({params})", "def")]
        elif k == "php":
            out += [(f"{lead}/** {fn.doc} */", "doc")]
            out += [
                (f"{lead}public static function {name}({params}): mixed", "def"),
                (f"{lead}{{", None),
            ]
        elif k in ("js", "ts"):
            ret = ": unknown" if k == "ts" else ""
            kw = "export function" if k == "ts" else "function"
            out += [(f"/** {fn.doc} */", "doc"), (f"{kw} {name}({params}){ret} {{", "def")]
        elif k == "java":
            out += [(f"{lead}/** {fn.doc} */", "doc")]
            if fn.entry:
                out += [(f'{lead}@PostMapping("/{owner.lower()}")', None)]
            out += [(f"{lead}public static Object {name}({params}) {{", "def")]
        elif k == "kt":
            out += [
                (f"{lead}/** {fn.doc} */", "doc"),
                (f"{lead}fun {name}({params}): Any? {{", "def"),
            ]
        else:
            out += [(f"// {name} {_lower_first(fn.doc)}", "doc")]
            out += [(f"func {name}({params}) any {{", "def")]
        base = lead + ind
        for level, text, tag in fn.body:
            out.append((base + ind * level + text if text else "", tag))
        closer = {"py": None, "rb": "end", "php": "}"}.get(k, "}")
        if closer:
            out.append((lead + closer, None))
        return out


def _types(**kw: str) -> dict[str, str]:
    return kw


LANGS: dict[str, Lang] = {
    "py": Lang("py", "python", "sentry.python", "    ", False),
    "rb": Lang("rb", "ruby", "sentry.ruby", "  ", False),
    "php": Lang("php", "php", "sentry.php", "    ", True),
    "js": Lang("js", "node", "sentry.javascript.node", "  ", True),
    "ts": Lang(
        "ts",
        "node",
        "sentry.javascript.node",
        "  ",
        True,
        _types(
            NSTR="string | undefined",
            STR="string",
            LIST="Line[]",
            MAP="Record<string, unknown>",
            NUM="unknown",
            DATE="string",
            INT="number",
            REC="Record<string, any>",
        ),
    ),
    "java": Lang(
        "java",
        "java",
        "sentry.java.spring-boot.jakarta",
        "    ",
        True,
        _types(
            NSTR="String",
            STR="String",
            LIST="List<Map<String, Object>>",
            MAP="Map<String, Object>",
            NUM="Object",
            DATE="String",
            INT="int",
            REC="Map<String, Object>",
        ),
    ),
    "kt": Lang(
        "kt",
        "java",
        "sentry.java.spring-boot.jakarta",
        "    ",
        False,
        _types(
            NSTR="String?",
            STR="String",
            LIST="List<Map<String, Any?>>",
            MAP="Map<String, Any?>",
            NUM="Any?",
            DATE="String",
            INT="Int",
            REC="Map<String, Any?>",
        ),
    ),
    "go": Lang(
        "go",
        "go",
        "sentry.go",
        "\t",
        False,
        _types(
            NSTR="*string",
            STR="string",
            LIST="[]map[string]any",
            MAP="map[string]any",
            NUM="any",
            DATE="string",
            INT="int",
            REC="map[string]any",
        ),
    ),
}


def strip_tokens(text: str) -> str:
    return re.sub(r"@[A-Z0-9]+@", "", text)


def _lower_first(text: str) -> str:
    """Go doc comments start with the name: "// total returns ..." (keep acronyms: "SKU")."""
    return text if text[1:2].isupper() else text[0].lower() + text[1:]
