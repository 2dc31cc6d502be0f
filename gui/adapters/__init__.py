"""Qt's side of the outside world: processes, pipes, threads, file watches, QSettings."""
