"""`make soak`: many runs from one app instance, then what they left behind."""
