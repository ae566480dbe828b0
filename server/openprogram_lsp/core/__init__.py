"""Domain types, ids and errors shared by every layer; imports nothing from the project."""
