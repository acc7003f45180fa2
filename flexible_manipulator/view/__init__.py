"""A browser view of the running graph (`scene`)."""
