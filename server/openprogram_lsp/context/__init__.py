"""The context engine: DAG to messages, token budget, compaction, ContextCommit."""
