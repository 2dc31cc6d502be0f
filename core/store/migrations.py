"""The run history's schema, as the steps that build it: one SQL script per version.

History opens a file at any earlier version and walks it forward, step by step, in one
transaction per step; a file newer than these steps is refused, never rewritten.
"""

from __future__ import annotations

# Each entry takes the database from version i to i + 1. Never edit a shipped step:
# add a new one, so every existing file walks the same path.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        launched_at REAL NOT NULL,
        finished_at REAL,
        source TEXT NOT NULL,
        model TEXT NOT NULL,
        status TEXT NOT NULL,
        failed_phase TEXT,
        time_to_ready REAL,
        peak_rss INTEGER,
        config TEXT NOT NULL,
        settings TEXT NOT NULL DEFAULT '{}',
        environment TEXT NOT NULL DEFAULT '{}',
        model_info TEXT NOT NULL DEFAULT '{}',
        failure TEXT,
        exit_code INTEGER,
        exit_signal INTEGER,
        stderr_tail TEXT NOT NULL DEFAULT '',
        writer_pid INTEGER,
        writer_started REAL
    );
    CREATE INDEX runs_by_model ON runs(model, launched_at);
    CREATE TABLE phases (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        state TEXT NOT NULL,
        started REAL,
        duration REAL,
        rss INTEGER,
        peak_rss INTEGER,
        latency TEXT NOT NULL DEFAULT '{}',
        PRIMARY KEY (run_id, name)
    );
    CREATE TABLE samples (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        t REAL NOT NULL,
        rss INTEGER NOT NULL
    );
    CREATE INDEX samples_by_run ON samples(run_id, t);
    """,
    # 2: scripts launched with a profile keep their command line.
    "ALTER TABLE runs ADD COLUMN command TEXT",
    # 3: sweeps, and which sweep trial a run was.
    """
    CREATE TABLE sweeps (
        id INTEGER PRIMARY KEY,
        created REAL NOT NULL,
        model TEXT NOT NULL,
        plan TEXT NOT NULL,
        status TEXT NOT NULL,
        summary TEXT,
        writer_pid INTEGER,
        writer_started REAL
    );
    ALTER TABLE runs ADD COLUMN sweep_id INTEGER REFERENCES sweeps(id) ON DELETE SET NULL;
    ALTER TABLE runs ADD COLUMN trial TEXT
    """,
    # 4: what the import spent (the import X-ray), parts of a phase (a GPU run's device
    # discovery and context creation), and each GPU's memory beside the RSS samples.
    """
    ALTER TABLE runs ADD COLUMN imports TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE phases ADD COLUMN parts TEXT NOT NULL DEFAULT '{}';
    CREATE TABLE gpu_samples (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        t REAL NOT NULL,
        gpu INTEGER NOT NULL,
        bytes INTEGER NOT NULL
    );
    CREATE INDEX gpu_samples_by_run ON gpu_samples(run_id, t)
    """,
    # 5: a program as a run's subject (its argv, until and working folder are in `config`):
    # the order a run's phases were reported in, per-phase figures beyond the columns (a
    # retrace count) as JSON, the program's own marks, and whether tflaunch stopped it at
    # its ready point. Old rows keep NULL order and read in the probe's order.
    """
    ALTER TABLE phases ADD COLUMN seq INTEGER;
    ALTER TABLE phases ADD COLUMN extra TEXT NOT NULL DEFAULT '{}';
    ALTER TABLE runs ADD COLUMN marks TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE runs ADD COLUMN stopped_at_ready INTEGER NOT NULL DEFAULT 0
    """,
    # 6: what the launcher did before time zero (a cold page cache's eviction report, the
    # caches it emptied: the run's launch notes), and each phase's reads (in `extra`).
    """
    ALTER TABLE runs ADD COLUMN launch TEXT NOT NULL DEFAULT '{}'
    """,
    # 7: the runs in the order History lists them, newest first: without it, the first
    # screen of a 10,000-run history waited for SQLite to sort the whole table (50 ms).
    """
    CREATE INDEX runs_by_launch ON runs(launched_at DESC, id DESC)
    """,
    # 8: an extra, profiled run's first step or first call in parts (its anatomy).
    """
    ALTER TABLE runs ADD COLUMN anatomy TEXT NOT NULL DEFAULT '{}'
    """,
)
