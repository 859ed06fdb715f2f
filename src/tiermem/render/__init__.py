"""What a person sees of a result that is not the result's own text: the tables of `stats`,
`import squad` and `log` (`tables`), the report's charts (`charts`) and the progress drawn on
stderr during long work (`progress`). It may import `results` and `errors`, never
the store or a step: it draws what it is handed.
"""
