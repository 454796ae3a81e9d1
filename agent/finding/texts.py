"""The finding's sentences, in the incident's language (English and Spanish)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent import trigger

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "restore-removed": "Restores the lines commit {commit} removed from {path}.",
        "restore-previous": "Restores what {path}:{line} read before commit {commit}.",
        "revert-added": "Takes out the lines commit {commit} added to {path}.",
        "hypothesis": "A hypothesis to check against the intent of the change, not a tested fix.",
        "numbered_commit": "Lines are numbered as in commit {commit}: the running revision "
        "was not read or no longer has these lines.",
        "lines": "{n} line(s) changed in {files} file(s)",
        "restores": "it brings back code that ran before commit {commit}",
        "removes": "it takes out code that commit {commit} added on purpose",
        "multi": "commit {commit} changed {n} files; undoing one hunk may leave the others "
        "inconsistent",
        "callers": "{n} call site(s) of {name} found in the evidence",
        "stack_callers": "{n} caller(s) of {name} on the stack",
        "no_callers": "callers of {name} were not searched",
        "release-known": "The events name the running release ({release}).",
        "release-unknown": "The events name no release: the running code is a guess.",
        "change-before-errors": "Commit {commit} landed {hours} h before the first error.",
        "change-after-errors": "Commit {commit} is dated after the first error.",
        "blame-agrees": "Blame of the crash line names the suspect commit.",
        "blame-differs": "Blame of the crash line names another commit ({commit}).",
        "guard-removed": "The change removed a guard and the exception is about a missing value.",
        "names-match": "Names of the exception appear in the changed lines ({names}).",
        "docs": "The documentation describes the expected behaviour ({path}).",
        "no-docs": "No documentation about the code involved was found.",
        "off-stack": "The fault is off the stack: the link from the change to the crash is "
        "inferred.",
        "one-event": "Only one event was read in full.",
        "events": "{n} events were read in full.",
        "no-hunk": "No change of the suspect commit could be quoted.",
        "shares-frame": "shares {names}",
        "same-entry": "same entry point ({entry})",
        "same-release": "events of release {release}",
        "after-release": "first seen after release {release} was deployed",
        "failing-request": "the failing requests",
        "failing-job": "the failing jobs",
        "failing-cli": "the failing command",
        "failing-unknown": "the failing events",
        "replay-request": "Replay one of the failing requests",
        "replay-job": "Re-run one of the failing jobs with its payload",
        "replay-cli": "Run the failing command again with the same arguments",
        "replay-unknown": "Reproduce one of the failing events",
    },
    "es": {
        "restore-removed": "Restaura las líneas que el commit {commit} eliminó de {path}.",
        "restore-previous": "Restaura lo que decía {path}:{line} antes del commit {commit}.",
        "revert-added": "Quita las líneas que el commit {commit} añadió a {path}.",
        "hypothesis": "Una hipótesis que hay que contrastar con la intención del cambio, no un "
        "arreglo probado.",
        "numbered_commit": "Las líneas se numeran como en el commit {commit}: la revisión en "
        "marcha no se leyó o ya no tiene estas líneas.",
        "lines": "{n} línea(s) cambiada(s) en {files} fichero(s)",
        "restores": "recupera código que funcionaba antes del commit {commit}",
        "removes": "quita código que el commit {commit} añadió a propósito",
        "multi": "el commit {commit} cambió {n} ficheros; deshacer un solo fragmento puede "
        "dejar los demás incoherentes",
        "callers": "{n} llamada(s) a {name} encontradas en las evidencias",
        "stack_callers": "{n} llamador(es) de {name} en la traza",
        "no_callers": "no se buscaron las llamadas a {name}",
        "release-known": "Los eventos indican la versión en marcha ({release}).",
        "release-unknown": "Los eventos no indican la versión: el código en marcha es una "
        "suposición.",
        "change-before-errors": "El commit {commit} llegó {hours} h antes del primer error.",
        "change-after-errors": "El commit {commit} tiene fecha posterior al primer error.",
        "blame-agrees": "El blame de la línea del fallo señala el commit sospechoso.",
        "blame-differs": "El blame de la línea del fallo señala otro commit ({commit}).",
        "guard-removed": "El cambio quitó una comprobación y la excepción trata de un valor "
        "ausente.",
        "names-match": "Nombres de la excepción aparecen en las líneas cambiadas ({names}).",
        "docs": "La documentación describe el comportamiento esperado ({path}).",
        "no-docs": "No se encontró documentación sobre el código implicado.",
        "off-stack": "El fallo está fuera de la traza: la relación entre el cambio y el error "
        "es una inferencia.",
        "one-event": "Solo se leyó completo un evento.",
        "events": "Se leyeron completos {n} eventos.",
        "no-hunk": "No se pudo citar ningún cambio del commit sospechoso.",
        "shares-frame": "comparte {names}",
        "same-entry": "mismo punto de entrada ({entry})",
        "same-release": "eventos de la versión {release}",
        "after-release": "visto por primera vez tras desplegar la versión {release}",
        "failing-request": "las peticiones fallidas",
        "failing-job": "los trabajos fallidos",
        "failing-cli": "el comando fallido",
        "failing-unknown": "los eventos fallidos",
        "replay-request": "Reproducir una de las peticiones fallidas",
        "replay-job": "Volver a lanzar uno de los trabajos fallidos con su carga",
        "replay-cli": "Volver a ejecutar el comando fallido con los mismos argumentos",
        "replay-unknown": "Reproducir uno de los eventos fallidos",
    },
}


def texts(language: str) -> dict[str, str]:
    return TEXTS.get((language or "en").split("-")[0].lower(), TEXTS["en"])


def failing(event: Mapping[str, Any] | None, language: str) -> str:
    """ "the failing requests", "the failing jobs"…: what failed, as the events show it."""
    kind = trigger.kind_of(event) if event else "unknown"
    return texts(language)[f"failing-{kind}"]


def replay_phrase(event: Mapping[str, Any] | None, language: str) -> str:
    """How to make it fail again, in words that fit the incident (a request, a job, a CLI)."""
    kind = trigger.kind_of(event) if event else "unknown"
    return texts(language)[f"replay-{kind}"]
