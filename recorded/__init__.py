"""Recorded incidents: a scenario folder (../shared/scenarios/README.md) as a project's sources.

`recorded` provides the same `agent.sources.Sources` as the live sources of bot/, for the
demo, the CLI and the tests: the recorded Sentry export behind the Sentry MCP server's
tool names, the bundle's code, and its docs. It imports `agent` and `search` (a
recording's docs are indexed as live docs are), never `bot` (the wiring) nor `storage`.
"""
