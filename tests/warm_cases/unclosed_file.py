"""A log file never closed: a cold interpreter flushes it as the file object is finalised."""

log = open("unclosed.csv", "w")  # never closed, on purpose
log.write("epoch,loss\n1,0.5\n")
print("wrote the log")
