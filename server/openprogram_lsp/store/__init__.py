"""Persistence: git-backed session stores and the private checkpoint store."""
