"""The HTTP API and the alert intake, beside /slack/events on the same aiohttp server.

`mount.mount(web_app, ...)` puts a FastAPI application (routes, validation and the OpenAPI
document from the pydantic models of `models`) inside the aiohttp app that serves Bolt,
so one port serves both. The routes call the same use cases as Slack (bot/usecases).
"""
