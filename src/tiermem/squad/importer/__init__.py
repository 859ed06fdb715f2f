"""`tiermem import squad`: the run (`squad_import`), the files it reads (`import_sources`), each
file in bounded pieces (`file_pieces`), when git last committed each (`last_commits`) and where
each section lands by Squad's model (`placement`). It may import the core and
`squad.reading`.
"""
