"""Tools the model can call: registry, static admission, permission policy, built-ins."""
