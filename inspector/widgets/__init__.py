"""Widgets and the Qt glue of the window: thin views over the models, gestures turned into core calls."""
