"""Which error-tracker issue is the question about?

Ranks issues by how well their title, culprit and metadata answer the operator's
words (in English or Spanish), not by how many events they have. Newness in the
window breaks ties, because a regression is what an operator usually asks about.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime, timedelta
from typing import Any

# Spanish → the English word code usually uses. Generic software vocabulary only.
GLOSSARY = {
    "exportacion": "export",
    "ventas": "sale",
    "venta": "sale",
    "guardar": "save",
    "guarda": "save",
    "crear": "create",
    "alta": "create",
    "anadir": "add",
    "agregar": "add",
    "insertar": "insert",
    "actualizar": "update",
    "editar": "edit",
    "modificar": "update",
    "borrar": "delete",
    "eliminar": "delete",
    "buscar": "search",
    "busqueda": "search",
    "listar": "list",
    "listado": "list",
    "ver": "view",
    "consultar": "get",
    "obtener": "get",
    "leer": "read",
    "cargar": "load",
    "enviar": "send",
    "subir": "upload",
    "descargar": "download",
    "exportar": "export",
    "importar": "import",
    "pagar": "pay",
    "cobrar": "charge",
    "reembolso": "refund",
    "devolucion": "refund",
    "iniciar": "login",
    "sesion": "session",
    "acceso": "login",
    "registro": "signup",
    "registrar": "register",
    "pedido": "order",
    "orden": "order",
    "factura": "invoice",
    "facturar": "invoice",
    "pago": "payment",
    "carrito": "cart",
    "cesta": "cart",
    "producto": "product",
    "articulo": "item",
    "usuario": "user",
    "cliente": "customer",
    "cuenta": "account",
    "envio": "shipping",
    "direccion": "address",
    "precio": "price",
    "descuento": "discount",
    "cupon": "coupon",
    "impuesto": "tax",
    "inventario": "inventory",
    "existencia": "stock",
    "almacen": "warehouse",
    "correo": "email",
    "notificacion": "notification",
    "informe": "report",
    "reporte": "report",
    "suscripcion": "subscription",
    "tarifa": "rate",
    "moneda": "currency",
    "importe": "amount",
    "total": "total",
    "linea": "line",
    "fecha": "date",
    "archivo": "file",
    "fichero": "file",
    "imagen": "image",
    "mensaje": "message",
    "comentario": "comment",
    "reserva": "booking",
    "cita": "appointment",
    "tarea": "task",
    "proyecto": "project",
    "equipo": "team",
    "empresa": "company",
    "contrasena": "password",
    "clave": "key",
    "token": "token",
    "perfil": "profile",
    "busca": "search",
}

# What an operator's verb suggests about the HTTP method of the failing request.
METHODS = {
    "POST": {
        "save",
        "create",
        "add",
        "insert",
        "send",
        "upload",
        "pay",
        "charge",
        "checkout",
        "signup",
        "register",
        "submit",
        "place",
        "import",
        "login",
        "book",
        "store",
    },
    "PUT": {"update", "edit", "save", "modify", "change"},
    "PATCH": {"update", "edit", "modify", "change"},
    "DELETE": {"delete", "remove", "cancel"},
    "GET": {
        "search",
        "list",
        "view",
        "get",
        "read",
        "load",
        "download",
        "export",
        "find",
        "show",
        "fetch",
        "open",
    },
}

STOP = {
    "the",
    "a",
    "an",
    "of",
    "on",
    "in",
    "to",
    "for",
    "and",
    "or",
    "is",
    "are",
    "was",
    "were",
    "why",
    "what",
    "when",
    "since",
    "with",
    "from",
    "errors",
    "error",
    "failing",
    "fails",
    "fail",
    "failed",
    "failure",
    "investigate",
    "look",
    "into",
    "please",
    "our",
    "we",
    "it",
    "el",
    "la",
    "los",
    "las",
    "un",
    "una",
    "de",
    "del",
    "al",
    "en",
    "por",
    "que",
    "y",
    "o",
    "con",
    "desde",
    "para",
    "investiga",
    "investigar",
    "errores",
    "fallan",
    "falla",
    "fallo",
    "falló",
    "porque",
    "qué",
    "cuando",
    "ayer",
    "hoy",
    "today",
    "yesterday",
    "last",
    "ultimo",
    "despliegue",
    "deploy",
    "deployment",
    "problem",
    "problema",
    "problemas",
    "this",
    "that",
    "these",
    "there",
    "have",
    "has",
    "been",
    "after",
    "antes",
    "despues",
}

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def singular(word: str) -> str:
    w = word.lower()
    if len(w) <= 3:
        return w
    if w.endswith("ies"):
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "zes", "ches", "shes", "ones")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def stem(word: str) -> str:
    """A light stem shared by English and Spanish plurals and verb forms."""
    w = singular(word)
    for suffix in ("ing", "ed"):
        if len(w) > len(suffix) + 3 and w.endswith(suffix):
            w = w[: -len(suffix)]
            break
    return w[:-1] if len(w) > 3 and w.endswith("e") else w


def words(text: str) -> list[str]:
    out: list[str] = []
    for raw in _WORD.findall(fold(text)):
        parts = [raw] + ([p for p in CAMEL.findall(raw)] if not raw.islower() else [])
        out.extend(p.lower() for p in parts if len(p) > 1)
    return out


def concepts(text: str) -> set[str]:
    out = set()
    for w in words(text):
        if w in STOP:
            continue
        out.add(canonical(w))
    return out


# English words and their canonical concept, so an operator's word finds the code's.
SYNONYMS = {
    "discount": "coupon",
    "promo": "coupon",
    "voucher": "coupon",
    "promotion": "coupon",
    "basket": "cart",
    "bill": "invoice",
    "billing": "invoice",
    "purchase": "order",
    "signin": "login",
    "logon": "login",
    "signup": "register",
    "registration": "register",
    "mail": "email",
    "text": "sms",
    "shipment": "shipping",
    "delivery": "shipping",
    "payment": "pay",
    "charge": "pay",
    "checkout": "checkout",
    "emitir": "create",
}

# Words that say the problem began recently: the question is about a regression.
ONSET = re.compile(
    r"\b(since|started|starting|stopped|broke|broken|suddenly|today|this morning|yesterday|"
    r"after the|last deploy|desde|empez|dej[oó]|dejaron|roto|rota|hoy|esta mañana|ayer|"
    r"tras el|último despliegue|ultimo despliegue|de repente|"
    # "what changed?": the operator asks about a regression, as "since" does
    r"changed|cambiad|cambi[oó]|last night|anoche)",
    re.IGNORECASE,
)


def canonical(word: str) -> str:
    word = GLOSSARY.get(word) or GLOSSARY.get(singular(word)) or word
    word = SYNONYMS.get(word) or SYNONYMS.get(singular(word)) or word
    return stem(word)


def weighted_concepts(issue: dict[str, Any]) -> dict[str, float]:
    """Concepts of an issue; the code and endpoint say more than free message text."""
    meta = issue.get("metadata") or {}
    strong = [issue.get("culprit"), meta.get("type"), meta.get("function"), meta.get("filename")]
    weak = [issue.get("title"), meta.get("value")]
    out: dict[str, float] = {}
    for weight, fields in ((0.6, weak), (1.0, strong)):
        for field in fields:
            if field:
                for c in concepts(str(field)):
                    out[c] = max(out.get(c, 0.0), weight)
    return out


_PARTS_OF_DAY = {  # hours, local to the question's clock (UTC here)
    "morning": (5, 12),
    "mañana": (5, 12),
    "afternoon": (12, 19),
    "tarde": (12, 21),
    "evening": (17, 24),
    "night": (19, 30),
    "noche": (19, 30),
}
_WHEN = re.compile(
    r"\b(this|esta|yesterday|ayer)(?:\s+(?:por\s+la\s+|a\s+la\s+)?"
    r"(morning|afternoon|evening|night|mañana|tarde|noche))?\b|\b(anoche|last night|tonight|"
    r"today|hoy)\b",
    re.IGNORECASE,
)


def onset_window(question: str, asked_at: datetime | None) -> tuple[datetime, datetime] | None:
    """ "since yesterday evening" → that evening, read against when the question was asked."""
    if asked_at is None:
        return None
    m = _WHEN.search(fold(question).lower().replace("manana", "mañana"))
    if m is None:
        return None
    day = asked_at.replace(hour=0, minute=0, second=0, microsecond=0)
    word, part, single = (m.group(1) or "").lower(), (m.group(2) or "").lower(), m.group(3)
    if single:
        single = single.lower()
        if single in ("anoche", "last night"):
            word, part = "yesterday", "night"
        elif single == "tonight":
            word, part = "this", "evening"
        else:
            word = "this"
    if word in ("yesterday", "ayer"):
        day -= timedelta(days=1)
    if word in ("this", "esta") and not part and single is None:
        return None  # "this" alone says nothing about time
    start_h, end_h = _PARTS_OF_DAY.get(part, (0, 24))
    return day + timedelta(hours=start_h), day + timedelta(hours=end_h)


SEVERITY = {"fatal": 0.5, "error": 0.25}
# A question about something that fails, crashes or raises: a warning or an info message
# (a slow export, a retry notice) is not that failure, however many words it shares.
FAILURE = re.compile(
    r"\b(fail\w*|crash\w*|errors?|broken|breaks?|exceptions?|raises?|throws?|falla\w*|"
    r"fallo\w*|errores|rompe\w*|peta\w*|excepci\w*)\b",
    re.IGNORECASE,
)
MINOR = {"warning", "info", "debug", "log"}


def rank(
    question: str,
    issues: list[dict[str, Any]],
    since: datetime | None = None,
    asked_at: datetime | None = None,
) -> list[tuple[float, float, dict[str, Any]]]:
    """Issues with (lexical score, total score), best first; never by event count."""
    q = concepts(question)
    onset = bool(ONSET.search(question))
    began = onset_window(question, asked_at)
    failure = bool(FAILURE.search(question))
    docs = [weighted_concepts(i) for i in issues]
    n = len(issues)
    scored = []
    for issue, doc in zip(issues, docs, strict=True):
        lexical = 0.0
        for c in q & doc.keys():
            df = sum(1 for d in docs if c in d)
            lexical += doc[c] * (1.0 + math.log((n + 1) / df))
        method = str(issue.get("culprit") or "").split(" ", 1)[0].upper()
        if method in METHODS and q & {stem(v) for v in METHODS[method]}:
            lexical += 1.0
        total = lexical
        first_seen = parse_time(issue.get("firstSeen"))
        if since and first_seen:
            # What first appeared inside the window the question is about is what changed:
            # it outweighs a recurring error that shares a word more (the entity's name
            # is in every issue of the service), the more so when the question speaks of an
            # onset; what began before the window was there before the trouble.
            if first_seen >= since:
                total += 3.0 if onset else 1.5
            elif first_seen < since - timedelta(days=7):
                total -= 1.0  # a long-standing, recurring error
            else:
                total -= 0.5
        if began and first_seen and began[0] - timedelta(hours=1) <= first_seen <= began[1]:
            total += 1.5  # it began when the operator says the trouble began
        level = str(issue.get("level") or level_of_title(str(issue.get("title") or "")))
        total += SEVERITY.get(level, -0.5)
        if failure and level in MINOR:
            total -= 0.75 * lexical + 1.0  # its words describe something else than a failure
        scored.append((lexical, total, issue))
    scored.sort(key=lambda s: (s[1], str(s[2].get("lastSeen") or "")), reverse=True)
    return scored


# Sentry titles an exception's issue "Type: message", a type being one word (`KeyError`,
# `*errors.errorString`, `Shipping::Unavailable`); a captured message is titled by its text.
EXCEPTION_TITLE = re.compile(r"^[^\s:]+(?:::[^\s:]+)*:\s")


def level_of_title(title: str) -> str:
    """The level of an issue listed without one (the Sentry MCP server's list shows none):
    an exception's or a message that speaks of failing is an error, another message is
    taken for an info message (a slow request, a retry notice)."""
    return "error" if EXCEPTION_TITLE.match(title) or FAILURE.search(title) else "info"


def parse_time(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
