"""A measured child's tie to the launcher's terminal, cut: it runs in the launcher's session
(and so in its scheduling group: the kernel's autogroup is the session's), in a process
group of its own, which a terminal treats as a background job. A background job that reads
the terminal or changes its modes (getpass does both, through /dev/tty) is stopped by
SIGTTIN or SIGTTOU until someone continues it, which no one would: the measured run would
hang to its timeout. Without a controlling terminal, /dev/tty cannot be opened at all and
such a program fails at once, as it does on its /dev/null stdin.

Standard library only: the probe and the launch hook run it in the user's interpreter.
"""

import os


def leave_terminal() -> None:
    """Give up this process's controlling terminal, if it has one (its children started
    later have none either). Never in a session leader: there TIOCNOTTY would also hang
    up the terminal's foreground job."""
    try:
        import fcntl
        import termios

        if os.getsid(0) == os.getpid():
            return
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except (ImportError, OSError):
        return  # no terminal to leave (or no Unix terminals here)
    try:
        fcntl.ioctl(fd, termios.TIOCNOTTY)
    except OSError:
        pass
    finally:
        os.close(fd)
