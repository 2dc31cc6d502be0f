"""The Advisor tab: the doctor from the app."""
