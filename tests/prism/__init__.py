"""Tests of prismlib.prism."""
