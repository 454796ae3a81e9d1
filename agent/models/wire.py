"""A field's name on the wire changed where its type is declared.

A decoder fills a field by the name its declaration gives it on the wire: a Go struct tag
(`json:"order_id"`), a Java or Kotlin annotation (`@JsonProperty("order_id")`,
`@SerialName("order_id")`), a pydantic alias (`Field(alias="orderId")`), the key a decoding
map or a from-dict constructor reads (`orderId: raw["order_id"]`). When that name changes
and the producer still sends the old one, the decoder leaves the field empty; the failure
shows up later, where the empty value is used (a lookup by it finds nothing, a nil is
dereferenced), in another file. The stack never shows the declaration, so it is found by
the type the failing code names and the field it reads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Where a declaration gives a field its name on the wire.
_TAG = re.compile(r"`[^`]*`")
_TAG_NAME = re.compile(r"\b(?:json|yaml|xml|bson|msgpack|mapstructure|toml|form|query):\"([^\",]*)")
_ANNOTATION = re.compile(r"@[\w.]+\s*\(\s*(?:(?:value|name)\s*=\s*)?[\"']([^\"']+)[\"']")
_ALIAS = re.compile(r"\b(?:validation_|serialization_)?alias\s*=\s*[\"']([^\"']+)[\"']")
# `orderId: raw["order_id"]`, `order_id=data.get("order_id")`, `orderId: raw.order_id`
_MAPPED = re.compile(
    r"^\s*[\"']?([A-Za-z_$][\w$]*)[\"']?\s*(?::(?!:)|=(?![=>]))\s*[A-Za-z_$][\w$]*"
    r"(?:\[\s*[\"']([^\"']+)[\"']\s*\]|\.get\(\s*[\"']([^\"']+)[\"']|\.([A-Za-z_$][\w$]*)\s*,?\s*$)"
)
_ANNOTATIONS = re.compile(r"@[\w.]+(?:\s*\([^)]*\))?")
_MODIFIERS = re.compile(
    r"\b(?:public|private|protected|internal|final|static|readonly|val|var|let|const|"
    r"lateinit|override|open|transient|volatile)\b"
)
_TYPE_DECLARATION = re.compile(
    r"\b(?:type|class|struct|record|interface|object|enum)\s+([A-Z][\w$]*)"
)
# Type names too common to tie a declaration to the failing code.
_GENERIC = {
    "String", "Integer", "Long", "Object", "List", "Map", "Set", "Optional", "Any", "Int",
    "Boolean", "Double", "Float", "Error", "Exception", "None", "True", "False", "Self",
    "Promise", "Array", "Record", "Dict", "Mono", "Flux", "Number", "Void", "Unit",
}  # fmt: skip


@dataclass
class Renamed:
    field: str
    before: str
    after: str
    line: int  # the added line, in the hunk's numbering
    text: str


def wire_name(line: str) -> str | None:
    """The name a declaration line gives its field on the wire, if it gives one."""
    for tag in _TAG.findall(line):
        m = _TAG_NAME.search(tag)
        if m:
            return m.group(1)
    for pattern in (_ANNOTATION, _ALIAS):
        m = pattern.search(line)
        if m:
            return m.group(1)
    m = _MAPPED.match(line)
    if m:
        return next(g for g in m.groups()[1:] if g)
    return None


def field_name(line: str) -> str | None:
    """The field a declaration line declares (its annotations and modifiers aside), or None
    for a line that holds only annotations (the field is then on a following line)."""
    code = _TAG.sub(" ", _ANNOTATIONS.sub(" ", line))
    code = _MODIFIERS.sub(" ", code).strip()
    if not code:
        return None
    m = re.match(r"^[\"']?([A-Za-z_$][\w$]*)[\"']?\s*[:=?]", code)  # Python, TS, Kotlin
    if m:
        return m.group(1)
    m = re.match(r"^([A-Za-z_]\w*)\s+[\w.*\[\]]+\s*$", code)  # Go: `OrderID string`
    if m:
        return m.group(1)
    m = re.search(r"([A-Za-z_]\w*)\s*(?:[;=,]|$)", code)  # Java: `String orderId;`
    return m.group(1) if m else None


def declared(
    side: list[tuple[int, str]], implicit: bool = False
) -> dict[str, tuple[str | None, int, str]]:
    """field → (wire name, line, text) for one side of a hunk (its lines in order); an
    annotation alone on its line names the field declared on the next line. With
    `implicit`, a field that names nothing is kept too, with None: the decoder then uses
    the field's own name."""
    out: dict[str, tuple[str | None, int, str]] = {}
    pending: tuple[str, int, str] | None = None
    for n, text in side:
        name, field = wire_name(text), field_name(text)
        if field is None:
            pending = (name, n, text) if name else pending
            continue
        if name is None and pending is not None:
            name, n, text = pending
        pending = None
        if name is not None or implicit:
            out[field] = (name, n, text.strip())
    return out


def renamed(hunk: dict[str, Any]) -> list[Renamed]:
    """The fields whose wire name the hunk changes: declared on both sides, named otherwise."""
    context = [(int(n), str(t)) for n, t in hunk.get("context") or []]
    added = [(int(n), str(t)) for n, t in hunk.get("added") or []]
    # The old side: the removed lines among the context, at their old places.
    old_start = int(hunk.get("old_start") or 0)
    removed = [(int(n), str(t)) for n, t in hunk.get("removed") or []]
    gone = {n for n, _ in removed}
    old_lines = int(hunk.get("old_lines") or 0)
    kept = iter(t for _, t in sorted(context))
    old_side = []
    for o in range(old_start, old_start + old_lines):
        text = dict(removed).get(o) if o in gone else next(kept, None)
        if text is not None:
            old_side.append((o, text))
    new_side = sorted(context + added)
    before, after = declared(old_side, True), declared(new_side, True)
    new_numbers = {n for n, _ in added}
    pairs = [(f, f) for f in sorted(before.keys() & after.keys())]
    # A field renamed as its wire name changed (`@JsonProperty("tracking_number") val
    # trackingNo` → `val trackingNumber`): the declarations the hunk replaced, in order.
    gone_fields = [f for f in before if f not in after and before[f][1] in gone]
    new_fields = [f for f in after if f not in before and after[f][1] in new_numbers]
    if len(gone_fields) == len(new_fields):
        pairs += list(zip(gone_fields, new_fields, strict=True))
    out = []
    for old, new in pairs:
        (was, _, _), (now, n, text) = before[old], after[new]
        if was is None and now is None:
            continue  # neither side names it on the wire: a plain rename
        if (was or old) != (now or new) and n in new_numbers:
            out.append(Renamed(new, was or old, now or new, n, text))
    return out


def declaring_types(hunk: dict[str, Any]) -> set[str]:
    """The types whose declaration the hunk is in: named by its header or by a declaration
    line among its lines."""
    lines = [str(hunk.get("function") or "")]
    lines += [str(t) for _, t in sorted((hunk.get("context") or []) + (hunk.get("added") or []))]
    found = {m for line in lines for m in _TYPE_DECLARATION.findall(line)}
    if not found:  # a decoding function: the types its header names (`): Order {`)
        found = set(re.findall(r"\b[A-Z][\w$]*", lines[0]))
    return found - _GENERIC


def types_named(lines: list[str]) -> set[str]:
    """The type names a stretch of code uses (`ev events.Reserved`, `OrderEvent ev`,
    `ev: Reserved`): capitalized identifiers, by their last segment."""
    return {m for line in lines for m in re.findall(r"\b[A-Z][\w$]*", line)} - _GENERIC


def explains(
    hunk: dict[str, Any],
    path_types: set[str],
    path_names: dict[str, int],
    keys: frozenset[str] = frozenset(),
) -> tuple[Renamed, str, int] | None:
    """The wire name the hunk changed for a field the failing code reads, of a type the
    failing code names: the field, why it fails and how many steps the field is from the
    failing value on its data path; None when the hunk changes no such name."""
    types = declaring_types(hunk) & path_types
    # When the failing code reads plain data by key (`$rec['customer_ref']`, one of `keys`),
    # a decoded field can still be that very key in another case style (`customerRef`).
    styled = {n.replace("_", "").replace("-", ""): n for n in keys}
    for r in renamed(hunk):
        # The field read as itself or through its accessor (`ev.getOrderId()`).
        field = r.field.lower()
        read = {field, f"get{field}", f"is{field}"} & set(path_names)
        if not types:
            same = styled.get(field.replace("_", ""))
            read = {same} if same and same in keys and len(field) >= 6 else set()
        if read:
            type_ = sorted(types)[0] if types else sorted(declaring_types(hunk) or {"it"})[0]
            why = (
                f"renames {type_}.{r.field}'s serialized name ({r.before!r} → {r.after!r}): "
                f"data sent as {r.before!r} now decodes to an empty {r.field}"
            )
            return r, why, min(path_names.get(n, 1) for n in read)
    return None
