"""Where items run and how their results come back, for every run that fans work out.

- ``runner``: the ``Runner`` registry and the local thread pool;
- ``ray_runner``: Ray tasks over a cluster (extra ``[ray]``);
- ``map``: the one parallel map over items (``map_items``, ``map_ordered``), resume and errors per item;
- ``shipping``: what an item writes for the run's files, held until the driver lands it;
- ``envshare``: environments fetched between the nodes of a cluster instead of rebuilt;
- ``localcluster``: a local multi-node Ray cluster on one machine, for tests and benchmarks.

The runners ship callables and never name what they do (an import contract): a ground floor beside
``core``, under every package that fans work out. The old names (``sweworld.runs.parallel``,
``sweworld.shipping``...) stay importable, as these very modules.
"""
