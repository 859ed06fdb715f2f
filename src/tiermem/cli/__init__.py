"""The command line: the `tiermem` entry point (`main`), each command's handler (`handlers`)
and parser (`parser`; the commands users run most are read without it, `plain`), and the
guided tour (`demo`). A front: a handler calls `Memory` and prints; it may import
everything, and nothing but `__main__` imports it.
"""
