"""The Sweep tab: a sweep's plan, its run and its verdict."""
