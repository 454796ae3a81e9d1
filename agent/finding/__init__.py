"""A finding an on-call engineer can act on, computed from the stored evidence and a suspect.

Given the evidence of an investigation (Sentry issues and events, the code at the running
revision, blame, the changes and their diffs, greps, docs) and a suspect (path, lines,
commit), this package finds the suspect hunk and states: the change quoted (before → after),
the input the failing events carry (agent/trigger.py), the smallest change that would undo
the suspect one as a suggested diff (a hypothesis, never applied), every affected file and
line, the risk and complexity of that change, what raised or lowered the confidence, the
window the errors were seen in and the other issues of the window that look related.

It reads the evidence by its shape, not by tool name, so the offline investigator, the
model path and a salvaged run all get the same answer from the same items. Nothing here
is a special case of one incident: every rule is about diffs, stacks and events in general.
"""

from agent.finding.check import completed, problems
from agent.finding.core import FIELDS, Finding, arguments, compute
from agent.finding.evidence import Record, from_evidence, from_messages, from_results
from agent.finding.hunk import sequence
from agent.finding.texts import TEXTS, failing, replay_phrase, texts

__all__ = [
    "FIELDS",
    "TEXTS",
    "Finding",
    "Record",
    "arguments",
    "completed",
    "compute",
    "failing",
    "from_evidence",
    "from_messages",
    "from_results",
    "problems",
    "replay_phrase",
    "sequence",
    "texts",
]
