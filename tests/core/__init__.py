"""Tests of the core modules directly in prismlib/."""
