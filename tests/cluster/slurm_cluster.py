"""The tests' real single-node Slurm: the one `tflaunch cluster sandbox up` starts."""

from tflaunch.core.cluster.sandbox import Cluster, missing

__all__ = ["Cluster", "missing"]
