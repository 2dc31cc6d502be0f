"""The History tab: every stored run, loaded in pages and followed as the file changes."""
