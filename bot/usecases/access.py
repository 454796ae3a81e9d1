"""Who may do what to an investigation, from the project's configuration (bot/config.py)."""

from __future__ import annotations

import logging
from enum import StrEnum

from agent.domain import Investigation
from bot.config import Project, Projects
from bot.usecases.ports import Directory
from bot.usecases.results import Actor, Refused

log = logging.getLogger(__name__)


class Action(StrEnum):
    EDIT = "edit"
    APPROVE = "approve"
    DISCARD = "discard"
    CONTINUE = "continue"
    CREATE_ANYWAY = "create anyway"
    ANSWER = "answer"
    RERUN = "re-run"
    CANCEL = "cancel"


# Who besides an approver may do each action. The requester may answer the bot's question
# and continue their own stopped run; and edit the draft, because the person who asked
# knows the incident best and fixing the draft's wording publishes nothing: the approval
# binds the exact version and hash, and with require_other_approver it must come from
# someone else. Approve, Create anyway and Discard (which ends the draft for good) take
# an approver.
# A re-run or a cancel is theirs too: it publishes nothing, and the person who asked may
# stop or restart their own request.
REQUESTER_MAY = frozenset(
    {Action.ANSWER, Action.CONTINUE, Action.EDIT, Action.RERUN, Action.CANCEL}
)
WHO_ELSE = {a: " or the requester" for a in REQUESTER_MAY}
# Publishing actions: with require_other_approver, never the requester.
PUBLISHING = frozenset({Action.APPROVE, Action.CREATE_ANYWAY})


class Access:
    def __init__(self, projects: Projects, directory: Directory | None = None) -> None:
        self.projects = projects
        self.directory = directory

    def project_of(self, inv: Investigation) -> Project | None:
        return self.projects.projects.get(inv.scope.project_key)

    async def check(self, action: Action, actor: Actor, inv: Investigation) -> Refused | None:
        """Why `actor` may not do `action` to `inv`, or None: first where it comes from,
        then who asks."""
        if refused := self.place(actor, inv):
            return refused
        project = self.project_of(inv)
        if project is None:
            return Refused("forbidden", "This project is no longer configured.")
        if action in REQUESTER_MAY and actor.user == inv.requester:
            return None
        if not await self.is_approver(project, actor):
            if action in PUBLISHING:
                return Refused("forbidden", "Only the project's approvers can publish this draft.")
            return Refused(
                "forbidden",
                f"Only the project's approvers{WHO_ELSE.get(action, '')} can {action} this. "
                "Nothing was changed.",
            )
        if action in PUBLISHING and project.require_other_approver and actor.user == inv.requester:
            return Refused("forbidden", "Someone other than the requester must approve this draft.")
        return None

    @staticmethod
    def place(actor: Actor, inv: Investigation) -> Refused | None:
        """A Slack action counts only from the channel, and the workspace, the investigation
        was started in (investigations stored before the workspace was recorded: the channel
        alone). Other surfaces vouch for their callers themselves."""
        if actor.surface != "slack":
            return None
        origin = inv.origin
        if origin.surface != "slack" or not origin.channel or actor.channel != origin.channel:
            return Refused(
                "forbidden",
                "This investigation belongs to another channel; act on it in its own thread. "
                "Nothing was changed.",
            )
        if origin.team is not None and actor.team != origin.team:
            return Refused(
                "forbidden", "This investigation belongs to another workspace. Nothing was changed."
            )
        return None

    async def is_approver(self, project: Project, actor: Actor) -> bool:
        """Listed by id, or a member of the approvers' user group; anyone when neither is set.
        A surface that vouches for its callers itself (the HTTP API's tokens) says so."""
        if project.key in actor.approves:
            return True
        user = actor.user
        if not project.approvers and not project.approver_group:
            return True
        if user in project.approvers:
            return True
        if project.approver_group and self.directory is not None:
            members = await self.directory.members(project.approver_group)
            if members is None:
                log.warning("could not read the members of %s", project.approver_group)
                return False
            return user in members
        return False
