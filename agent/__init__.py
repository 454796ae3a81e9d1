"""The investigation itself: domain, loop, tools and model adapters.

`agent` is the core: it imports nothing from `bot`, `search` or `storage`.
Those implement the ports in `agent.ports`; `bot` wires them together.
"""
