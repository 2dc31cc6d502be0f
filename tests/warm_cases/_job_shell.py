"""Not a case: the job-control shell the terminal cases run their command in.

    python _job_shell.py EVENTS_FD COMMANDS_FD COMMAND...

Started as a session leader with a pty as stdin/stdout/stderr, it makes the pty its
controlling terminal and runs COMMAND as a job in the foreground, as an interactive shell
does: in a process group of its own that the terminal's Ctrl+C and Ctrl+Z reach. It writes
"pid N", "stopped" and "exit S" (S as Python reports a child's status: -N for signal N) to
EVENTS_FD, and after a stop waits for a line on COMMANDS_FD before it continues the job (fg).
"""

import fcntl
import os
import signal
import sys
import termios

JOB_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)


def main() -> None:
    events, commands, argv = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    for number in JOB_SIGNALS:
        signal.signal(number, signal.SIG_IGN)  # the terminal's signals are for the job
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)
        os.tcsetpgrp(0, os.getpgrp())
        for number in (*JOB_SIGNALS, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(number, signal.SIG_DFL)
        os.close(events)
        os.close(commands)
        os.execv(argv[0], argv)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child did it first
    os.tcsetpgrp(0, pid)
    os.write(events, f"pid {pid}\n".encode())
    while True:
        _, status = os.waitpid(pid, os.WUNTRACED)
        if os.WIFSTOPPED(status):
            os.tcsetpgrp(0, os.getpgrp())
            os.write(events, b"stopped\n")
            os.read(commands, 64)
            os.tcsetpgrp(0, pid)
            os.killpg(pid, signal.SIGCONT)
            continue
        os.write(events, f"exit {os.waitstatus_to_exitcode(status)}\n".encode())
        return


if __name__ == "__main__":
    main()
