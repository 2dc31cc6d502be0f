"""The settings panel: one editor per setting, the model's inputs."""
