"""A study beyond one session: shards of one selection, and resuming a session from its results file.

    selection.py   what was selected (scenario files, runs, variants, options) as one id; the shard a scenario
                   falls in
    resume.py      the trials a results file already holds for the same selection, replayed instead of rerun

Both are plain functions over collected items and results; plugin.py calls them from its collection and
fixture hooks. See docs/plugin.md, "Shards and resume".
"""
