"""SQLAlchemy (async) persistence: investigations, evidence, messages and jobs.

Implements `agent.ports.InvestigationStore` (`SqlStore`) and
`agent.ports.JobQueue` (`SqlJobQueue`). Imports nothing but `agent`.
"""

from storage.db import create_engine, create_schema, default_url, url_from_env
from storage.jobs import SqlJobQueue
from storage.store import InvestigationSummary, SqlStore

__all__ = [
    "InvestigationSummary",
    "SqlJobQueue",
    "SqlStore",
    "create_engine",
    "create_schema",
    "default_url",
    "url_from_env",
]
