def build():
    return "the project's model"
