"""`tiermem import squad`: the run (`squad_import`), the files it reads (`import_sources`), each
file in bounded pieces (`file_pieces`), when git last committed each (`last_commits`), where
each section lands by Squad's model (`placement`) and what earlier imports archived of a file
(`earlier`); following what the team writes after it (`follow`, by the files this clone
imported: `imported_files`), and a privacy scrub Squad made carried to tiermem's copies
(`scrubbed`). It may import the core and `squad.reading`.
"""
