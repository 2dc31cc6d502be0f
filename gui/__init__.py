"""PySide6 + pyqtgraph views of tflaunch. Never imports TensorFlow."""
