"""Tests of prismlib.runs."""
