"""Tests of prismlib.data."""
