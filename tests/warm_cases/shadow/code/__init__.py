"""The project's own package named `code` (the standard library has a `code` module too)."""
