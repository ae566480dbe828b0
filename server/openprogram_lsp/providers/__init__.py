"""Model providers: offline (default), scripted, OpenAI-compatible and Anthropic."""
