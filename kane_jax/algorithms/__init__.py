"""Dynamics algorithms, one per file."""
