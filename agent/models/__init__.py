"""Model adapters behind the one `Model` port: offline (no LLM) and scripted (tests)."""
