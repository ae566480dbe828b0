"""The dispatcher: the only conversation entry point (``process_user_turn``)."""

from openprogram_lsp.dispatcher.services import Services
from openprogram_lsp.dispatcher.turns import Dispatcher

__all__ = ["Dispatcher", "Services"]
