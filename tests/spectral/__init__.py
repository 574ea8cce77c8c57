"""Tests of prismlib.spectral."""
