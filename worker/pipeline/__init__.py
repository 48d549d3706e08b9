"""The in-process pipeline: :func:`~worker.pipeline.solve.solve` (spec -> Result) and
:func:`~worker.pipeline.validate.summarize_spec` (what a spec would run, without solving).
"""
