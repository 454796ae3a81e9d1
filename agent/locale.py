"""The language the answer is written in.

The operator's language directs the answer: the one their request names (a CLI flag, a
surface's user locale), else the project's configured one; only when neither is known
is it guessed from the question itself (common words of a few languages), and English
is the last resort.
"""

from __future__ import annotations

import re

NAMES = {
    "en": "English",
    "es": "Spanish",
    "pt": "Portuguese",
    "fr": "French",
    "de": "German",
    "it": "Italian",
}

# Short, frequent words that tell these languages apart in a one-line question.
_COMMON = {
    "en": "the errors error when why is are what which on in of to and since after fails "
    "failing saving creating orders investigate does not with from",
    "es": "los las el la de del al por qué que cuando errores error fallan falla desde "
    "guardar pedidos investiga investigar con una un no es son se",
    "pt": "os as o a do da dos das por que quando erros erro falham falha desde salvar "
    "pedidos investigue investigar com uma um não é são ao",
    "fr": "les le la des du de pourquoi quand erreurs erreur échouent depuis enregistrer "
    "commandes enquête avec une un ne pas est sont lors",
    "de": "die der das den dem des warum wenn fehler beim speichern bestellungen seit "
    "untersuche mit eine ein nicht ist sind und",
    "it": "gli il lo la le dei delle perché quando errori errore falliscono dal salvare "
    "ordini indaga con una un non è sono",
}
_WORDS = {lang: frozenset(words.split()) for lang, words in _COMMON.items()}


def normalize(code: object) -> str | None:
    """A bare language code ("es" from "es-ES" or "es_MX"), or None if there is none."""
    if not isinstance(code, str) or not code.strip():
        return None
    return re.split(r"[-_]", code.strip())[0].lower() or None


def detect(text: str) -> str | None:
    """The language of a short text, by its common words; None when nothing stands out."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    if not words:
        return None
    scores = {lang: sum(w in common for w in words) for lang, common in _WORDS.items()}
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)
    (best, top), (_, second) = ranked[0], ranked[1]
    return best if top > 0 and top > second else None


def answer_language(requested: object, configured: object, question: str) -> str:
    """The request's language, else the project's, else the question's, else English."""
    return normalize(requested) or normalize(configured) or detect(question) or "en"


def describe(code: str) -> str:
    """ "Spanish (es)" for the prompt; an unknown code is given as it is."""
    name = NAMES.get(normalize(code) or "")
    return f"{name} ({code})" if name else code
