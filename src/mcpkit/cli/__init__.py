"""The mcpkit command line."""
