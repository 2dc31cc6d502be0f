"""Plots the tabs and review images share: memory, phase bands, the waterfall, charts."""
