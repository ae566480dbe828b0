"""Settings read once: config files, environment and flags, validated by pydantic.

A new section is one module under ``config/sections/`` defining a ``Section`` subclass.
"""

from openprogram_lsp.config.files import default_state_root, user_config_path, workspace_config_path
from openprogram_lsp.config.loader import Settings, load_sections, load_settings
from openprogram_lsp.config.section import SECTIONS, EnvVar, Section

__all__ = ["SECTIONS", "EnvVar", "Section", "Settings", "default_state_root", "load_sections",
           "load_settings", "user_config_path", "workspace_config_path"]
