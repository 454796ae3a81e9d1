"""Being close to the crash says where to look first; a change of a kind that raises the
exception, which builds the failing value, is evidence. The best change that is only close
gives way to one of the next two that fits and builds the value, unless that one already ran
in the release before without these errors, or the close one wrote the crash line."""

from agent.models.changes import Change, fit_over_closeness


def change(sha: str, score: float, **kw) -> Change:
    base = dict(
        sha=sha,
        summary=sha,
        author="Dev",
        date="2026-12-01T10:00:00Z",
        path=f"src/{sha}.ts",
        hunk={},
        line=1,
        text="",
        score=score,
        newest_for_path=True,
    )
    return Change(**(base | kw))


def test_a_fitting_producer_passes_a_change_that_is_only_close():
    close = change("close", 18.8, reasons=["changes the crashing function 1 line(s) from it"])
    producer = change("producer", 11.2, fits=True, producer=True)
    ranked = fit_over_closeness([close, producer, change("other", 3.0)])
    assert [c.sha for c in ranked][:2] == ["producer", "close"]
    assert ranked[0].score > close.score
    assert any("only close to it" in r for r in ranked[0].reasons)


def test_it_does_not_pass_what_fits_wrote_the_crash_line_or_ran_before():
    for top, second in [
        (change("close", 18.8, fits=True), change("p", 11.2, fits=True, producer=True)),
        (change("close", 18.8, on_crash_line=True), change("p", 11.2, fits=True, producer=True)),
        (change("close", 18.8), change("p", 11.2, fits=True, producer=True, ran_before=True)),
        (change("close", 18.8), change("p", 11.2, fits=True)),  # fits, but builds nothing
        (change("close", 18.8), change("p", 9.0, fits=True, producer=True)),  # far behind
    ]:
        assert [c.sha for c in fit_over_closeness([top, second])] == ["close", "p"]
