""" "High" needs one clear winner: not a crash line that was only rewritten while a change
elsewhere also fits the exception, nor a winner with another commit that fits close behind."""

from agent import stacktrace
from agent.models.changes import Change
from agent.models.offline import Analysis
from tests.agent.test_changes import crash, frame


def change(sha: str, path: str, score: float, **kw) -> Change:
    base = dict(sha=sha, summary="", author="", date="2026-11-27T10:00:00Z", path=path)
    base |= dict(hunk={}, line=3, text="x", score=score, newest_for_path=True, fits=True)
    return Change(**(base | kw))


def analysis(winner: Change, rival: Change) -> Analysis:
    f = frame("app/comments.ts", 3, "author", "return user.deletedAt ? a : user;")
    exc = stacktrace.ExceptionInfo(type="TypeError", value="x", module=None, frames=[f])
    a = Analysis(issue={}, event={}, exc=exc, frame=f, path="app/comments.ts", revision="a" * 40)
    a.crash = crash(path="app/comments.ts", line=3, stack=[(f, "app/comments.ts")])
    a.change, a.ranking, a.change_line = winner, [winner, rival], 3
    return a


def test_a_rewritten_crash_line_with_a_fitting_rival_elsewhere_is_not_high():
    rival = change("loader", "app/loaders.ts", 14.0)
    rewrite = change("tidy", "app/comments.ts", 22.0, on_crash_line=True, blamed=True, rewrote=True)
    level, _, lowered = analysis(rewrite, rival).confidence()
    assert level != "high" and any("only rewritten" in d for d in lowered)
    written = change("tidy", "app/comments.ts", 22.0, on_crash_line=True, blamed=True)
    distant = change("loader", "app/loaders.ts", 10.0)
    assert analysis(written, distant).confidence()[0] == "high"  # a new line: it may well be it


def test_another_commit_that_fits_not_far_behind_is_not_high():
    """Two commits that each explain the exception, the second at 0.6 of the first or more:
    which one broke it is open, whatever else raised the first."""
    written = change("tidy", "app/comments.ts", 22.0, on_crash_line=True, blamed=True)
    close = change("loader", "app/loaders.ts", 14.0)
    level, _, lowered = analysis(written, close).confidence()
    assert level == "medium" and any("explains it too" in d for d in lowered)
    far = change("loader", "app/loaders.ts", 12.0)
    assert analysis(written, far).confidence()[0] == "high"


def test_another_commit_close_behind_is_not_high_even_when_it_fits_no_known_way():
    """Its score is made of other evidence (the data path, the stack, the words of the
    exception): at 0.6 of the winner's or more, the winner does not clearly win."""
    written = change("tidy", "app/comments.ts", 22.0, on_crash_line=True, blamed=True)
    unfit = change("loader", "app/loaders.ts", 14.0, fits=False)
    level, _, lowered = analysis(written, unfit).confidence()
    assert level == "medium" and any("not far behind" in d for d in lowered), lowered
    behind = change("loader", "app/loaders.ts", 12.0, fits=False)
    assert analysis(written, behind).confidence()[0] == "high"


def test_a_winner_that_rewrites_many_lines_is_not_high():
    """The commit may be sure while the line is not: a hunk of twenty-odd changed lines holds
    the fault somewhere among them."""
    lines = [[n, f"  line {n}"] for n in range(1, 13)]
    small = change("loader", "app/loaders.ts", 22.0, producer=True, hunk={"added": lines[:6]})
    other = change("tidy", "app/comments.ts", 10.0, fits=False)
    assert analysis(small, other).confidence()[0] == "high"
    big = change("loader", "app/loaders.ts", 22.0, producer=True)
    big.hunk = {"added": lines, "removed": lines[:10]}
    level, _, lowered = analysis(big, other).confidence()
    assert level == "medium" and any("rewrites 22 lines" in d for d in lowered)


def test_a_suspect_line_that_reads_what_its_own_change_defines_is_not_high():
    """The commit is sure, the line is not: the query it runs was rewritten in the same hunk,
    and the fault may sit in the query as well as in the call."""
    call = '        return find(WORKING_AT, Parameters.with("day", day)).list();'
    query = [
        [13, '    private static final String WORKING_AT = "from Coach c where c.leftOn >= :day";']
    ]
    other = change("tidy", "app/comments.ts", 10.0, fits=False)
    plain = change("repo", "app/CoachRepository.java", 22.0, producer=True, line=23, text=call)
    plain.hunk = {"added": [[23, call]]}
    assert analysis(plain, other).confidence()[0] == "high"
    both = change("repo", "app/CoachRepository.java", 22.0, producer=True, line=23, text=call)
    both.hunk = {"added": [*query, [23, call]]}
    level, _, lowered = analysis(both, other).confidence()
    assert level == "medium" and any("which the same change defines" in d for d in lowered)


def test_a_name_renamed_on_several_lines_leaves_the_line_open():
    """The exception names a field the change renamed in its declaration, its entry in a
    list and its getter: the commit is sure, which of those lines is the fault is a choice."""
    other = change("tidy", "app/comments.ts", 10.0, fits=False)
    removed = [
        [10, "    minutes = serializers.SerializerMethodField()"],
        [21, '            "minutes",'],
        [25, "    def get_minutes(self, ride):"],
    ]
    renamed = change("rename", "rides/serializers.py", 22.0, producer=True)
    renamed.hunk = {
        "added": [[10, "    seconds = serializers.SerializerMethodField()"]],
        "removed": removed,
    }
    a = analysis(renamed, other)
    a.exc.value = "'minutes'"
    level, _, lowered = a.confidence()
    assert level == "medium" and any("changed on 3 lines" in d for d in lowered)
    renamed.hunk = {"added": [], "removed": removed[:2]}
    assert a.confidence()[0] == "high"
