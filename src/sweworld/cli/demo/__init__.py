"""``sweworld demo``: the main job, end to end, on a few instances of the shipped ``lite`` dataset.

``command.py`` holds the command (``demo``) and the list of steps it runs; ``run.py`` the state the
steps share (``DemoRun``); ``steps.py`` (environments, isolation, evaluation, rollouts),
``mine.py`` (with ``swr.py``), ``world.py``, ``embedded.py`` and ``data.py`` the steps. The steps
import ``run.py`` and each other, never ``command.py``; this package imports nothing.
"""
