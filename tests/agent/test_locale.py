"""The answer's language: the request's, else the project's, else the question's."""

import pytest

from agent import locale


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Investiga los errores al guardar pedidos.", "es"),
        ("¿Por qué fallan los pagos desde esta mañana?", "es"),
        ("Investigate the errors when creating invoices.", "en"),
        ("Why are checkouts failing since the deploy?", "en"),
        ("Pourquoi les commandes échouent depuis ce matin ?", "fr"),
        ("Warum schlagen die Bestellungen beim Speichern fehl?", "de"),
        ("NullPointerException OrdersController", None),  # nothing tells
        ("", None),
    ],
)
def test_the_question_language_is_guessed_from_common_words(question, expected):
    assert locale.detect(question) == expected


def test_the_request_beats_the_project_which_beats_the_question():
    spanish = "¿Por qué fallan los pedidos?"
    assert locale.answer_language("en-GB", "es", spanish) == "en"
    assert locale.answer_language(None, "pt_BR", spanish) == "pt"
    assert locale.answer_language("  ", None, spanish) == "es"
    assert locale.answer_language(None, None, "OrdersController NPE") == "en"
    assert locale.answer_language(None, 42, spanish) == "es"  # a broken config is ignored


def test_the_prompt_names_the_language():
    assert locale.describe("es") == "Spanish (es)"
    assert locale.describe("pt-BR") == "Portuguese (pt-BR)"
    assert locale.describe("tlh") == "tlh"
