"""tiermem."""
