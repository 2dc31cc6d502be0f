"""The umask the launcher set (the table launches with 027)."""

import os

print("umask", oct(os.umask(0)))
