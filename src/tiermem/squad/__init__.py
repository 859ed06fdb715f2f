"""Everything that knows Squad's `.squad/` layout: its files, how to read and import them."""
