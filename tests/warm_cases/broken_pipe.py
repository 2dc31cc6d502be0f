"""`python script.py | head -1`: the reader goes away; what the script says and how it ends."""

for i in range(100_000):
    print("line", i)
