"""Tests of prismlib.lstm.claims."""
