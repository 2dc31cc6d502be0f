"""Output still buffered when the script swaps sys.stdout must come out at exit."""

import io
import sys

print("written before the swap")
sys.stdout = io.StringIO()
print("captured")
