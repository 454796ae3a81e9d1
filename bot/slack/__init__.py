"""The Slack surface: Block Kit messages and views, listeners and the Bolt app."""
