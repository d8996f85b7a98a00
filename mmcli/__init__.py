"""mm: muscle memory for computer-use agents."""

__version__ = "0.1.0"
