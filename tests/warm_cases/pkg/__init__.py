"""A package in the working folder, for `python -m pkg.tool`."""
