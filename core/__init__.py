"""Qt-free core of tflaunch: configs, the probe and its protocol, runs, statistics, CLI."""
