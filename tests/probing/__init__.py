"""Tests of prismlib.probing."""
