"""Tests of prismlib.profiles."""
