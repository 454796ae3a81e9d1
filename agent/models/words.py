"""The offline investigator's sentences, in the operator's language (English and Spanish)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.finding import failing, replay_phrase
from agent.models.changes import exception_kinds
from agent.report import code_span as q

if TYPE_CHECKING:
    from agent.models.offline import Analysis
    from agent.stacktrace import ExceptionInfo


def _when(value: Any) -> str:
    from agent.models.offline import iso_day

    return iso_day(value)


def _where(passage: dict[str, Any], lines: str) -> str:
    span = f"{passage['line_start']}-{passage['line_end']}"
    return f"{passage['path']} § {q(passage['heading'], 120)} ({lines} {span})"


def _release(event: dict[str, Any]) -> Any:
    release = event.get("release")
    return release.get("version") if isinstance(release, dict) else release


def _exc(a: Analysis) -> str:
    """The exception with its message quoted: the message is data, whatever it says."""
    value = str(a.exc.value or "").strip()
    return f"{a.exc.type}: {q(value)}" if value else str(a.exc.type)


def _removed(a: Analysis) -> str:
    assert a.change is not None
    lines = [t for _, t in a.change.hunk.get("removed") or [] if t.strip()]
    return "; ".join(q(t, 150) for t in lines[:3])


# The exception's kind, most telling first: a missing key is also "not found", a null
# dereference is also a TypeError in JavaScript.
KINDS = ("zero", "index", "null", "key", "format", "type")


def _kind(a: Analysis) -> str:
    kinds = exception_kinds(str(a.exc.type or ""), str(a.exc.value or ""))
    return next((k for k in KINDS if k in kinds), "")


def _code(a: Analysis, w: Words) -> str:
    """The failing line, quoted; its function's name when the line was not read."""
    if a.crash_code:
        return q(a.crash_code, 120)
    of = "el código de" if isinstance(w, Palabras) else "the code of"
    return f"{of} {q(a.frame.function, 80)}"


def _failing(a: Analysis, w: Words) -> str:
    """What fails, in the words of the incident: requests, jobs, a command."""
    return failing(a.event, "es" if isinstance(w, Palabras) else "en")


class Words:
    tracker_unreadable = "The error tracker could not be read"
    cannot_finish = "The diagnosis was refused twice; the evidence gathered is listed above."
    which_revision = (
        "The newest event carries no release, so I can't tell which commit was running. "
        "Which commit SHA was deployed when the errors happened?"
    )
    which_issue = "Several errors match equally; which one do you mean?"
    no_issue = "No error in the tracker matches the question in the time window."
    no_issue_detail = "No issue was found to follow; the window or the project may be wrong."
    check_tracker = "Check the time window and the project, or name the issue (its short id)."
    nothing = "Nothing could be gathered."
    no_frame_detail = "No frame of the stack trace maps to a file of the repository."
    check_stack = "Check that the release and the repository match the service that failed."
    no_change_found = (
        "No recent change explains the exception; the fault may predate the history read."
    )
    no_previous_release = (
        "The previous release is not known: the history read is the repository's recent "
        "history before the errors began."
    )
    no_docs = "No documentation about the identifiers involved was found."

    def window(self, previous: str, running: str) -> str:
        return (
            f"The change window is the previous release {previous[:12]} .. the running release "
            f"{running[:12]}: older commits were not considered."
        )

    def released_before(self, previous: str) -> str:
        return (
            f"No tag marks the previous release; Sentry lists {previous[:12]} before the running "
            "one, and it ran without these errors: the commits it already held count for less."
        )

    one_event = "Only the newest event was read in full; older events may differ."
    line_not_mapped = "The suspect line is given as numbered in the fault commit."
    release_unknown = (
        "The events carry no release: the code was read at the newest commit, which may not "
        "be what was running."
    )

    def release_unresolved(self, version: str, revision: str) -> str:
        return (
            f"Release {q(version, 120)} names no commit or tag of the repository: the code was "
            f"read at the default branch ({revision[:12]}), which may not be what was running."
        )

    def issues_in_window(self, n: int) -> str:
        return f"The tracker lists {n} unresolved issue(s) in the window."

    def issue_fact(self, issue: dict[str, Any]) -> str:
        return (
            f"Sentry issue {issue.get('shortId')} {q(issue.get('title'))} "
            f"({q(issue.get('culprit'), 120)}) "
            f"has {issue.get('count')} events, first seen {_when(issue.get('firstSeen'))}, "
            f"last seen {_when(issue.get('lastSeen'))}."
        )

    def event_fact(
        self, event: dict[str, Any], exc: ExceptionInfo | None, a: Analysis | None
    ) -> str:
        release = _release(event)
        text = f"The newest event ({_when(event.get('dateCreated'))}) "
        text += f"ran release {release}" if release else "names no release of the repository"
        if exc is not None and a is not None:
            where = f"`{a.path}:{a.frame.lineno}`"
            text += f" and raised {_exc(a)} in {q(a.frame.function, 120)} at {where}."
        else:
            text += f": {q(event.get('title'))}."
        return text

    def code_fact(self, a: Analysis) -> str:
        return (
            f"At revision {a.revision[:7]}, line {a.frame.lineno} of {a.path} reads: "
            f"{q(a.crash_code)}"
        )

    def blame_fact(self, a: Analysis) -> str:
        b = a.blame or {}
        return (
            f"Line {a.frame.lineno} of {a.path} was last changed by commit "
            f"{str(b.get('commit'))[:7]} ({q(b.get('author'), 80)}, {_when(b.get('date'))}: "
            f"{q(b.get('summary'), 200)})."
        )

    def change_fact(self, a: Analysis) -> str:
        c = a.change
        assert c is not None
        removed = _removed(a)
        text = (
            f"Commit {c.sha[:7]} ({q(c.summary, 200)}, {q(c.author, 80)}, {_when(c.date)}) "
            "changed "
            f"{c.path} at line {a.suspect()[1]}"
        )
        return text + (f", removing: {removed}." if removed else ".")

    def doc_fact(self, passage: dict[str, Any], quote: str | None) -> str:
        where = _where(passage, "lines")
        return (
            f"The documentation in {where} states: {q(quote)}"
            if quote
            else f"The documentation in {where} covers this behaviour."
        )

    def hypothesis(self, a: Analysis) -> str:
        where = f"{a.path}:{a.frame.lineno}"
        if a.change is None:
            return (
                f"{a.exc.type} at {where}: {self.unhandled(_kind(a), _code(a, self))}, for "
                f"{_failing(a, self)}; no change read explains it."
            )
        c = a.change
        why = "; ".join(c.reasons[:3]) or "it touches what the failing code uses"
        # "for the failing command", "for the failing requests": one verb fits both
        return (
            f"Commit {c.sha[:7]} changed {c.path}:{a.suspect()[1]} ({why}); since that "
            f"change, {a.exc.type} is raised at {where} for {_failing(a, self)}."
        )

    def unhandled(self, kind: str, code: str) -> str:
        """What the failing line meets that it does not handle, by the exception's kind."""
        return {
            "null": f"a value that {code} uses is missing (null)",
            "key": f"a key or an entry that {code} reads is absent",
            "index": f"an index on {code} goes past the data it is given",
            "zero": f"a divisor on {code} is zero",
            "format": f"a value that {code} parses is not in the format it expects",
            "type": f"a value that {code} uses is not of the type it expects",
        }.get(kind, f"{code} meets input or state that it does not handle")

    def candidate(self, a: Analysis, c: Any) -> str:
        why = "; ".join(c.reasons[:3]) or "shares words with the failure"
        return (
            f"Runner-up: commit {c.sha[:7]} ({q(c.summary, 80)}) in {c.path}:{c.line}, "
            f"score {c.score:.1f} against {a.change_score:.1f}: {why}."
        )

    def weak_lead(self, a: Analysis) -> str:
        assert a.change is not None
        return (
            f"Commit {a.change.sha[:7]} is the best lead, but the evidence does not single it "
            "out; check it and the runners-up before acting on it."
        )

    def history_cut(self, a: Analysis) -> str:
        b = a.blame or {}
        return (
            f"History not available: line {a.frame.lineno} of {a.path} dates from "
            f"{str(b.get('commit'))[:7]}, the oldest commit of the history read (a root or "
            "the cut of a truncated history), so the change that introduced it cannot be seen."
        )

    def origin(self, a: Analysis) -> str:
        o = a.origin
        assert o is not None
        why = "; ".join(o.reasons[:2])
        return (
            f"Read without a diff, the failing value is made at {o.path}:{o.line} "
            f"(`{o.text}`: {why}); check that line first."
        )

    def factors(self, raised: list[str], lowered: list[str]) -> str:
        up = "; ".join(raised) or "nothing"
        down = "; ".join(lowered) or "nothing"
        return f"Confidence raised by: {up}. Lowered by: {down}."

    def ask_candidates(self, a: Analysis) -> str:
        listed = "; ".join(
            f"{c.sha[:7]} {c.path}:{c.line} ({q(c.summary, 60)})" for c in a.ranking[:3]
        )
        return (
            f"I can't single out the change behind {a.exc.type} at {a.path}:{a.frame.lineno}. "
            f"Candidates: {listed or 'none in the recent history'}. Which of these shipped with "
            "the failing release? Reply with a commit SHA, or 'none'."
        )

    def elsewhere(self, a: Analysis) -> str:
        assert a.change is not None
        return (
            f"The exception is raised in {a.path}:{a.frame.lineno}, but the fault is the change "
            f"in {a.change.path}:{a.suspect()[1]}, which that line depends on."
        )

    def root_cause(self, a: Analysis, confidence: str = "medium") -> str:
        if a.change is not None and confidence != "low":
            c = a.change
            return (
                f"{a.exc.type} at {a.path}:{a.frame.lineno}, introduced by commit {c.sha[:7]}, "
                f"which changed {c.path}:{a.suspect()[1]}."
            )
        if a.change is not None:
            return (
                f"{a.exc.type} at {a.path}:{a.frame.lineno}: no change clearly explains it; the "
                f"best lead is commit {a.change.sha[:7]} in {a.change.path}:{a.suspect()[1]}."
            )
        if a.history_cut:
            return (
                f"{a.exc.type} at {a.path}:{a.frame.lineno} in {a.frame.function}; the history "
                "that would show its cause is not available."
            )
        return (
            f"{a.exc.type} at {a.path}:{a.frame.lineno} in {a.frame.function}; no change in the "
            "history read explains it."
        )

    def check(self, a: Analysis, doc: str | None) -> str:
        path, line, commit = a.suspect()
        replay = replay_phrase(a.event, "en")
        text = f"{replay} against {a.revision[:7]} and check {path}:{line}"
        if commit:
            text += f" against the parent of {commit[:7]}"
        if doc:
            text += f"; compare the behaviour with {doc}"
        return text + "."

    def title(self, a: Analysis) -> str:
        path, line, _ = a.suspect()
        return f"{a.exc.type} in {a.frame.function} ({path}:{line})"[:120]

    def no_frame(self, event: dict[str, Any]) -> str:
        title = q(event.get("title"))
        return f"{title}: the failing code could not be located in the repository."


class Palabras(Words):
    tracker_unreadable = "No se pudo leer el gestor de errores"
    cannot_finish = "El diagnóstico se rechazó dos veces; las evidencias reunidas están arriba."
    which_revision = (
        "El último evento no indica la versión desplegada, así que no sé qué commit estaba en "
        "marcha. ¿Qué SHA de commit estaba desplegado cuando ocurrieron los errores?"
    )
    which_issue = "Varios errores encajan por igual; ¿a cuál te refieres?"
    no_issue = "Ningún error del gestor encaja con la pregunta en la ventana de tiempo."
    no_issue_detail = (
        "No se encontró ninguna incidencia que seguir; la ventana o el proyecto pueden ser "
        "incorrectos."
    )
    check_tracker = (
        "Revisa la ventana de tiempo y el proyecto, o indica la incidencia (su id corto)."
    )
    nothing = "No se pudo reunir nada."
    no_frame_detail = "Ningún marco de la traza corresponde a un fichero del repositorio."
    check_stack = "Comprueba que la versión y el repositorio corresponden al servicio que falló."
    no_change_found = (
        "Ningún cambio reciente explica la excepción; el fallo puede ser anterior al "
        "historial leído."
    )
    no_previous_release = (
        "No se conoce la versión anterior: se leyó el historial reciente del repositorio "
        "anterior al inicio de los errores."
    )
    no_docs = "No se encontró documentación sobre los identificadores implicados."

    def window(self, previous: str, running: str) -> str:
        return (
            f"La ventana de cambios va de la versión anterior {previous[:12]} a la desplegada "
            f"{running[:12]}: no se consideraron commits más antiguos."
        )

    def released_before(self, previous: str) -> str:
        return (
            f"Ninguna etiqueta marca la versión anterior; Sentry lista {previous[:12]} antes de la "
            "desplegada y funcionó sin estos errores: los commits que ya contenía pesan menos."
        )

    one_event = "Solo se leyó completo el evento más reciente; los anteriores podrían diferir."
    line_not_mapped = "La línea sospechosa se indica con la numeración del commit del fallo."
    release_unknown = (
        "Los eventos no indican la versión: el código se leyó en el último commit, que puede "
        "no ser el que estaba desplegado."
    )

    def release_unresolved(self, version: str, revision: str) -> str:
        return (
            f"La versión {q(version, 120)} no corresponde a ningún commit ni etiqueta del "
            f"repositorio: el código se leyó en la rama por defecto ({revision[:12]}), que puede "
            "no ser el que estaba desplegado."
        )

    def issues_in_window(self, n: int) -> str:
        return f"El gestor lista {n} incidencia(s) sin resolver en la ventana."

    def issue_fact(self, issue: dict[str, Any]) -> str:
        return (
            f"La incidencia de Sentry {issue.get('shortId')} {q(issue.get('title'))} "
            f"({q(issue.get('culprit'), 120)}) tiene {issue.get('count')} eventos; "
            f"visto por primera vez {_when(issue.get('firstSeen'))}, "
            f"por última vez {_when(issue.get('lastSeen'))}."
        )

    def event_fact(
        self, event: dict[str, Any], exc: ExceptionInfo | None, a: Analysis | None
    ) -> str:
        release = _release(event)
        when = _when(event.get("dateCreated"))
        text = f"El evento más reciente ({when}) "
        no_release = "no indica una versión del repositorio"
        text += f"corría la versión {release}" if release else no_release
        if exc is not None and a is not None:
            where = f"`{a.path}:{a.frame.lineno}`"
            text += f" y lanzó {_exc(a)} en {q(a.frame.function, 120)}, {where}."
        else:
            text += f": {q(event.get('title'))}."
        return text

    def code_fact(self, a: Analysis) -> str:
        return (
            f"En la revisión {a.revision[:7]}, la línea {a.frame.lineno} de {a.path} dice: "
            f"{q(a.crash_code)}"
        )

    def blame_fact(self, a: Analysis) -> str:
        b = a.blame or {}
        return (
            f"La línea {a.frame.lineno} de {a.path} se modificó por última vez en el commit "
            f"{str(b.get('commit'))[:7]} ({q(b.get('author'), 80)}, {_when(b.get('date'))}: "
            f"{q(b.get('summary'), 200)})."
        )

    def change_fact(self, a: Analysis) -> str:
        c = a.change
        assert c is not None
        removed = _removed(a)
        text = (
            f"El commit {c.sha[:7]} ({q(c.summary, 200)}, {q(c.author, 80)}, {_when(c.date)}) "
            "cambió "
            f"{c.path} en la línea {a.suspect()[1]}"
        )
        return text + (f", eliminando: {removed}." if removed else ".")

    def doc_fact(self, passage: dict[str, Any], quote: str | None) -> str:
        where = _where(passage, "líneas")
        return (
            f"La documentación en {where} dice: {q(quote)}"
            if quote
            else f"La documentación en {where} describe este comportamiento."
        )

    def hypothesis(self, a: Analysis) -> str:
        where = f"{a.path}:{a.frame.lineno}"
        if a.change is None:
            return (
                f"{a.exc.type} en {where}: {self.unhandled(_kind(a), _code(a, self))}, en "
                f"{_failing(a, self)}; ningún cambio leído lo explica."
            )
        c = a.change
        why = "; ".join(c.reasons[:3]) or "toca lo que usa el código que falla"
        return (
            f"El commit {c.sha[:7]} cambió {c.path}:{a.suspect()[1]} ({why}); desde ese "
            f"cambio se lanza {a.exc.type} en {where} en {_failing(a, self)}."
        )

    def unhandled(self, kind: str, code: str) -> str:
        return {
            "null": f"falta (null) un valor que usa {code}",
            "key": f"falta una clave o una entrada que lee {code}",
            "index": f"un índice de {code} se sale de los datos que recibe",
            "zero": f"un divisor de {code} vale cero",
            "format": f"un valor que interpreta {code} no tiene el formato que espera",
            "type": f"un valor que usa {code} no es del tipo que espera",
        }.get(kind, f"{code} recibe una entrada o un estado que no trata")

    def candidate(self, a: Analysis, c: Any) -> str:
        why = "; ".join(c.reasons[:3]) or "comparte palabras con el fallo"
        return (
            f"Alternativa: commit {c.sha[:7]} ({q(c.summary, 80)}) en {c.path}:{c.line}, "
            f"puntuación {c.score:.1f} frente a {a.change_score:.1f}: {why}."
        )

    def weak_lead(self, a: Analysis) -> str:
        assert a.change is not None
        return (
            f"El commit {a.change.sha[:7]} es la mejor pista, pero la evidencia no lo distingue; "
            "revisarlo junto con las alternativas antes de actuar."
        )

    def history_cut(self, a: Analysis) -> str:
        b = a.blame or {}
        return (
            f"Historial no disponible: la línea {a.frame.lineno} de {a.path} viene de "
            f"{str(b.get('commit'))[:7]}, el commit más antiguo del historial leído (una raíz o "
            "el corte de un historial truncado), así que no se ve el cambio que la introdujo."
        )

    def origin(self, a: Analysis) -> str:
        o = a.origin
        assert o is not None
        why = "; ".join(o.reasons[:2])
        return (
            f"Leído sin diff, el valor que falla se produce en {o.path}:{o.line} "
            f"(`{o.text}`: {why}); revise esa línea primero."
        )

    def factors(self, raised: list[str], lowered: list[str]) -> str:
        up = "; ".join(raised) or "nada"
        down = "; ".join(lowered) or "nada"
        return f"La confianza sube por: {up}. Baja por: {down}."

    def ask_candidates(self, a: Analysis) -> str:
        listed = "; ".join(
            f"{c.sha[:7]} {c.path}:{c.line} ({q(c.summary, 60)})" for c in a.ranking[:3]
        )
        return (
            f"No puedo señalar el cambio que causa {a.exc.type} en {a.path}:{a.frame.lineno}. "
            f"Candidatos: {listed or 'ninguno en el historial reciente'}. ¿Cuál de ellos salió "
            "con la versión que falla? Responde con el SHA de un commit, o 'ninguno'."
        )

    def elsewhere(self, a: Analysis) -> str:
        assert a.change is not None
        return (
            f"La excepción se lanza en {a.path}:{a.frame.lineno}, pero el fallo es el cambio en "
            f"{a.change.path}:{a.suspect()[1]}, del que depende esa línea."
        )

    def root_cause(self, a: Analysis, confidence: str = "medium") -> str:
        if a.change is not None and confidence != "low":
            c = a.change
            return (
                f"{a.exc.type} en {a.path}:{a.frame.lineno}, introducido por el commit "
                f"{c.sha[:7]}, que cambió {c.path}:{a.suspect()[1]}."
            )
        if a.change is not None:
            return (
                f"{a.exc.type} en {a.path}:{a.frame.lineno}: ningún cambio lo explica con "
                f"claridad; la mejor pista es el commit {a.change.sha[:7]} en "
                f"{a.change.path}:{a.suspect()[1]}."
            )
        if a.history_cut:
            return (
                f"{a.exc.type} en {a.path}:{a.frame.lineno}, en {a.frame.function}; el historial "
                "que mostraría su causa no está disponible."
            )
        return (
            f"{a.exc.type} en {a.path}:{a.frame.lineno}, en {a.frame.function}; ningún cambio "
            "del historial leído lo explica."
        )

    def check(self, a: Analysis, doc: str | None) -> str:
        path, line, commit = a.suspect()
        replay = replay_phrase(a.event, "es")
        text = f"{replay} contra {a.revision[:7]} y revisar {path}:{line}"
        if commit:
            text += f" frente al padre de {commit[:7]}"
        if doc:
            text += f"; comparar el comportamiento con {doc}"
        return text + "."

    def title(self, a: Analysis) -> str:
        path, line, _ = a.suspect()
        return f"{a.exc.type} en {a.frame.function} ({path}:{line})"[:120]

    def no_frame(self, event: dict[str, Any]) -> str:
        title = q(event.get("title"))
        return f"{title}: no se pudo localizar el código que falla en el repositorio."


def words_for(language: str) -> Words:
    return Palabras() if language.split("-")[0].lower() == "es" else Words()
