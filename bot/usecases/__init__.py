"""The application layer: what a person may ask of an investigation, on any surface.

Slack's listeners (bot/slack), and any other way in, call these use cases
(`investigations.Investigations`); each one loads the investigation, checks who asks and
from where (`access`), makes the domain call, saves, queues the work and wakes what
follows the database (the workers, the thread sync), in one place. The outcome is a
`results.Done` or a `results.Refused`, never a raised error for a refusal.
"""
