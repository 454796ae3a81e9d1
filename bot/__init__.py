"""incident-bot: the application package (CLI, Slack app, wiring)."""
