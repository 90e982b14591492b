"""A study beyond one session: shards of one selection, and resuming a session from its results file.

    selection.py   what was selected (scenario files, runs, variants, options) as one id; the shard a scenario
                   falls in
    resume.py      the trials a results file already holds for the same selection, replayed instead of rerun
    journal.py     what a running trial has so far, on disk beside the results file, recorded if its process
                   is killed outright

selection and resume are plain functions over collected items and results, journal a file and a Progress
that keeps it; plugin.py calls them from its collection, fixture and report hooks. See docs/plugin.md,
"Shards, resume and merged reports".
"""
