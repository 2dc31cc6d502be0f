"""The one error of profiles: what cannot be read, written or found, and what to do."""


class ProfileError(Exception):
    """A profile cannot be read, written or found; the message says which and what to do."""
