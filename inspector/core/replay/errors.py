"""The errors guarded replay and restore raise."""

from __future__ import annotations


class GuardedReplayError(Exception):
    """Root of the errors raised by guarded replay and restore."""


class BadInputError(GuardedReplayError):
    """The path, character, event id or backup folder given cannot be used (exit code 2)."""


class FolderBusyError(GuardedReplayError):
    """The folder kept changing while it was being planned: a writer is active."""


class BackupError(GuardedReplayError):
    """A backup could not be written, or a backup folder is not a usable backup."""


class PlanningCancelledError(GuardedReplayError):
    """The person cancelled while the plan was being made; nothing was written."""
