"""Tests of prismlib.lstm.iclr."""
