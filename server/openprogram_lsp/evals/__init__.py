"""The evaluation harness: coding tasks run through the real dispatcher with any model."""
