"""Tests of the sans-I/O protocol core: plain functions, no event loop anywhere."""
