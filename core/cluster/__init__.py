"""Sweeps on a Slurm cluster: a plan expanded into a shared folder, run as job arrays by
the cluster's own `sbatch`, its results read back as files and merged into the history.

tflaunch runs no daemon and no scheduler of its own: the folder is the whole state (the
plan, one file per trial, one result file per finished trial), so any machine that sees
it can ask where the sweep stands, merge it, or rerun what is missing.
"""
