"""The ground floor every other package stands on, importing nothing of sweworld above it.

- ``types``: ``Task``, ``ExecResult``, the rows and results every layer passes around;
- ``errors``: the one error family (``SWEWorldError`` and its kinds, each with a hint);
- ``paths``: ``$SWEWORLD_HOME`` and the crash-safe file operations;
- ``names``: the names that become one path component (instance ids, run ids, model directories);
- ``images``: SWE-bench's and SWE-rebench's image names, built and parsed in one module;
- ``executor`` and ``protocols``: ``Executor``, the one protocol real and simulated episodes share,
  and the ``Backend``, ``Runner``, ``Pool`` and ``Agent`` protocols around it;
- ``registry``: named factories, with entry-point plugins;
- ``config``: the pydantic configuration of backends, runs and timeouts, and its files;
- ``moved``: the aliases that keep the old module names.

The old names (``sweworld.types``, ``sweworld.config``...) stay importable, as these very modules.
"""
