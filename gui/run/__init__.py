"""The Run tab: a run's view, its phases, imports and log, the session's runs, Launch script."""
