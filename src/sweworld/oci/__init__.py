"""Container images as environments, without a daemon and without root.

- ``reference``: an image's name as the user gives it (a Docker Hub or other registry name, a
  local OCI layout ``oci:DIR:TAG``, a ``docker-archive:FILE``), read once, with its store key;
- ``registries``: how the containers tools are configured here: ``registries.conf`` (mirrors,
  insecure registries; ``$CONTAINERS_REGISTRIES_CONF``) and the credentials file
  (``$REGISTRY_AUTH_FILE``, else ``~/.docker/config.json``);
- ``pull``: ``skopeo copy`` into the store, every blob once by digest, with one clear error per
  failure (bad name, missing tag, refused login, rate limit, unreachable registry), and one warning
  per layer holding unsafe entries;
- ``cachedir``: skopeo's blob-info cache kept in the store (nothing written outside ``$SWEWORLD_HOME``);
- ``unpack``: one layer unpacked as an ordinary user into a directory an overlay stacks
  (whiteouts, opaque directories, hard links, links out of the root; devices skipped, setuid
  dropped; nothing written outside the layer or through a link), checked against its digest;
- ``tree``: one directory of an image as a plain tree (the sim backend's base tree);
- ``store``: ``$SWEWORLD_HOME/images``: blobs, layers by digest (shared by every image holding
  them), one record per image (its layers, ``Env``, ``WorkingDir``, ``User``); list, remove, gc.

An episode on an image is a ``sandbox.Sandbox`` whose ``/`` is the image's layers under a private
upper layer (``sandbox.Layers`` mounted at ``/``).
"""
