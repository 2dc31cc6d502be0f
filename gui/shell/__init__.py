"""The main window and what frames every tab: its actions, tabs, first paint, About."""
