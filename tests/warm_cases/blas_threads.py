"""Thread counts set in the script before `import numpy`, as data-loading scripts do: OpenBLAS
reads OPENBLAS_NUM_THREADS when numpy loads it."""

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"
import numpy as np  # noqa: E402

matrix = np.ones((512, 512))
matrix @ matrix  # the pool starts with the first product
print("threads", len(os.listdir("/proc/self/task")))
