"""The command line: each command's parser and handler (`main`, the `tiermem` entry point) and
the guided tour (`demo`). A front: a handler parses, calls `Memory` and prints; it may import
everything, and nothing but `__main__` imports it.
"""
