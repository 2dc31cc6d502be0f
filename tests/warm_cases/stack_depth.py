"""The call stack the script runs in: inspect.stack, traceback.print_stack, faulthandler."""

import faulthandler
import inspect
import sys
import traceback


def where():
    print("depth", len(inspect.stack()), "outermost", inspect.stack()[-1].filename)
    traceback.print_stack(file=sys.stdout)
    sys.stdout.flush()
    faulthandler.dump_traceback(all_threads=False)


where()
