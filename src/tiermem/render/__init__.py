"""What a person sees of a result that is not the result's own text: the tables of `stats`,
`import squad` and `log` (`tables`), the report's charts (`charts`), the progress drawn on
stderr during long work (`progress`), and how each operation's command prints its result
(`printers`, each named by its operation). It may import `results`, `errors` and `text`,
never the store or a step: it draws what it is handed.
"""
