"""The Profiles tab: launch profiles, saving them, and trusting a stranger's."""
