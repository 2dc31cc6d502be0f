"""input() with a prompt, then input() at the end of input."""

name = input("name? ")
print("hello", name)
try:
    input("more? ")
except EOFError:
    print("no more input")
