"""Every signal's disposition and the blocked set a script starts with."""

import signal

handlers = {s.name: str(signal.getsignal(s)) for s in signal.Signals if signal.getsignal(s) != signal.SIG_DFL}
print("not default", handlers)
print("blocked", sorted(s.name for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
