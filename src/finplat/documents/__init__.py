"""Uploaded documents: what a file really is (by its bytes) and merging several into one PDF."""
