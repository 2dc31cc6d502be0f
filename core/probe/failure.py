"""The one exception the probe raises on purpose."""


class ProbeFailure(Exception):  # noqa: N818 (the protocol's name for it, used everywhere)
    """A failure with a stable kind and a message that tells the user what to do."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message
