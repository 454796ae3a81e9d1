"""An index error under a loop whose bound a commit changed: the loop header that binds the
index is the suspect line, even when a newer commit rewrote the crash line since."""

from agent.models.changes import rank
from tests.agent.test_changes import commit, crash, hunk


def _check(path, source, crash_at, exc_type, exc_value, loop, rewritten):
    c = crash(
        path=path,
        line=crash_at,
        function="plan",
        exc_type=exc_type,
        exc_value=exc_value,
        code=source[crash_at - 1].strip(),
        nearby=source,
        source=source,
    )
    bound = hunk(loop[0][0], loop)
    bound["removed"] = [[loop[0][0], rewritten]]
    bound["function"] = source[0]
    tidy = hunk(
        crash_at, [(crash_at, source[crash_at - 1])], [(crash_at, source[crash_at - 1] + " ")]
    )
    ranked = rank(
        c,
        [
            commit("tidy", "2026-11-28T09:00:00Z", (path, [tidy])),
            commit("bound", "2026-11-28T08:00:00Z", (path, [bound])),
        ],
    )
    assert ranked and ranked[0].sha == "bound", [(r.sha, r.line, r.reasons) for r in ranked]
    assert ranked[0].line == loop[0][0], (ranked[0].line, ranked[0].text)


def test_go_a_loop_over_every_stop_indexes_one_leg_too_many():
    source = [
        "func plan(r Route) []Eta {",
        "\tlegs := r.Legs()",
        "\tout := []Eta{}",
        "\tfor i := 0; i < len(r.Stops); i++ {",
        "\t\tnext := r.Stops[(i+1)%len(r.Stops)]",
        "\t\tarrive := at.Add(legs[i].Drive)",
        "\t\tout = append(out, Eta{next.ID, arrive})",
        "\t}",
        "\treturn out",
        "}",
    ]
    _check(
        "internal/route/plan.go",
        source,
        6,
        "runtime.boundsError",
        "runtime error: index out of range [3] with length 3",
        [(4, source[3]), (5, source[4])],
        "\tfor i := 0; i < len(r.Stops)-1; i++ {",
    )


def test_javascript_an_inclusive_loop_bound():
    source = [
        "function plan(route) {",
        "  const legs = route.legs;",
        "  const out = [];",
        "  for (let i = 0; i <= legs.length; i++) {",
        "    const minutes = legs[i].minutes;",
        "    out.push(Math.round(minutes));",
        "  }",
        "  return out;",
        "}",
    ]
    _check(
        "src/route/plan.js",
        source,
        5,
        "TypeError",
        "Cannot read properties of undefined (reading 'minutes')",
        [(4, source[3]), (6, source[5])],
        "  for (let i = 0; i < legs.length; i++) {",
    )
