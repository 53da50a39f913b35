"""Layer L1: clock, backoff, task supervision, logging helpers (stdlib only)."""
