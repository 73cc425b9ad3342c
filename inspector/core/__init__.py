"""Qt-free core of the window: loading, timelines, filtering, live watching, redaction, recent locations.

Nothing under ``inspector.core`` imports Qt (a test proves it); models and widgets build on it.
"""
