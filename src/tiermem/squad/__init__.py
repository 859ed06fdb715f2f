"""Squad integration: wiring tiermem into a team that uses Squad's `.squad/` layout."""
