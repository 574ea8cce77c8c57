"""Tests of prismlib.lstm."""
