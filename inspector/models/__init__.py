"""Qt item models of the window. They are fed plain rows by their owner and never touch files."""
