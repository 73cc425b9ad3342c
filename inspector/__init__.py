"""memory-inspector: a desktop tool and CLI for AI-companion memory folders."""

__version__ = "0.1.0"
