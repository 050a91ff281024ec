"""OpenHands' ``file_editor`` tool over a sweworld episode, with OpenHands' own editor logic.

OpenHands' ``FileEditor`` (view, create, str_replace, insert, undo_edit; encodings, binary files,
images, line numbers, snippets, error texts) works on a real file system. Rather than rewrite it,
this executor gives it one: a private staging directory on the host (``sweworld-openhands-*`` in
the temp dir, emptied before every call) where the episode's path ``P`` appears as ``STAGE/P``.

For each call: the target is fetched from the episode (a file: its bytes; a directory: itself and,
for ``view``, its entries two levels deep, as empty stand-ins; the parent of a ``create``), OpenHands'
own ``FileEditorExecutor`` runs on ``STAGE/P``, a file it changed or created is written back into the
episode with ``Executor.write_file``, and ``STAGE`` is taken out of the observation's text and path.
So the editor never opens a host path the agent names, the episode's files are the only ones that
change, and what the model reads is OpenHands' own text about ``P``. ``undo_edit`` keeps working
(OpenHands' history is keyed by the staged path, which is stable).

Bytes: an executor with ``read_bytes`` (every real sandbox) gives the exact bytes; one without
(the sim and hybrid executors) gives text, so an edit of a file that is not UTF-8 is refused there
rather than written back as replacement characters. Calls are serialized (one staging directory).
"""

from __future__ import annotations

import os
import posixpath
import shlex
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from openhands.sdk.llm import TextContent
from openhands.sdk.tool import DeclaredResources, ToolAnnotations, ToolExecutor
from openhands.tools.file_editor.definition import (
    TOOL_DESCRIPTION,
    FileEditorAction,
    FileEditorObservation,
    FileEditorTool,
)
from openhands.tools.file_editor.impl import FileEditorExecutor

from sweworld.integrations.openhands_episodes import attached, release

if TYPE_CHECKING:
    from openhands.sdk.conversation import LocalConversation
    from openhands.sdk.conversation.state import ConversationState
    from openhands.sdk.tool import Action

    from sweworld.core.executor import Executor

NOT_UTF8 = ("Cannot edit {path}: the file is not valid UTF-8, and this episode reads files as text only "
            "(use the terminal for this file).")


class EpisodeFileEditorExecutor(ToolExecutor[FileEditorAction, FileEditorObservation]):
    """OpenHands' ``FileEditorExecutor`` over the files of ``executor`` (see the module docstring)."""

    def __init__(self, executor: Executor, *, on_close: Any = None):
        self.executor = executor
        self.workdir = executor.workdir
        self.stage = Path(tempfile.mkdtemp(prefix="sweworld-openhands-")).resolve()
        self.editor = FileEditorExecutor(workspace_root=str(self.stage) + self.workdir)
        self._lock = threading.Lock()
        self._on_close = on_close
        self._exact = callable(getattr(executor, "read_bytes", None))

    # -- the episode's side --------------------------------------------------------------------
    def _read(self, path: str) -> tuple[str, bytes | None]:
        """("file", bytes) | ("dir", None) | ("missing", None): what ``path`` is in the episode."""
        try:
            data = self.executor.read_bytes(path) if self._exact else self.executor.read_file(path).encode()  # type: ignore[attr-defined]
        except IsADirectoryError:
            return "dir", None
        except (FileNotFoundError, NotADirectoryError):
            return "missing", None
        return "file", data

    def _entries(self, path: str) -> list[tuple[str, str]]:
        """(type, relative path) of what lies two levels deep under the episode's directory ``path``."""
        listing = self.executor.run(f"find -L {shlex.quote(path)} -mindepth 1 -maxdepth 2 -printf '%y %P\\0' "
                                    "2>/dev/null; true").output
        return [(item[0], item[2:]) for item in listing.split("\0") if len(item) > 2 and item[1] == " "]

    # -- the staging side ----------------------------------------------------------------------
    def local(self, path: str) -> Path:
        """Where the episode's absolute ``path`` is staged."""
        return self.stage / posixpath.normpath(path).lstrip("/")

    def _clear(self) -> None:
        shutil.rmtree(self.stage, ignore_errors=True)
        self.stage.mkdir(mode=0o700)

    def _stage(self, path: str, command: str) -> tuple[str, bytes | None]:
        kind, data = self._read(path)
        local = self.local(path)
        if kind == "file":
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(data or b"")
        elif kind == "dir":
            local.mkdir(parents=True, exist_ok=True)
            if command == "view":
                for type_, rel in self._entries(path):
                    entry = local / rel
                    if type_ == "d":
                        entry.mkdir(parents=True, exist_ok=True)
                    else:
                        entry.parent.mkdir(parents=True, exist_ok=True)
                        entry.touch()
        elif command == "create" and self._read(posixpath.dirname(posixpath.normpath(path)))[0] == "dir":
            local.parent.mkdir(parents=True, exist_ok=True)
        return kind, data

    def _unstage(self, observation: FileEditorObservation) -> FileEditorObservation:
        root = str(self.stage)

        def clean(text: str) -> str:
            return text.replace(root + "/", "/").replace(root, "/")

        content = [item.model_copy(update={"text": clean(item.text)}) if isinstance(item, TextContent) else item
                   for item in observation.content]
        return observation.model_copy(update={"content": content,
                                              "path": clean(observation.path) if observation.path else None})

    # -- the tool ------------------------------------------------------------------------------
    def __call__(self, action: FileEditorAction,
                 conversation: LocalConversation | None = None) -> FileEditorObservation:
        with self._lock:
            self._clear()
            if not posixpath.isabs(action.path):  # OpenHands refuses it; stage what its hint looks for
                self._stage(posixpath.join(self.workdir, action.path), "")
                return self._unstage(self.editor(action, conversation))
            kind, before = self._stage(action.path, action.command)
            if (kind == "file" and not self._exact and action.command != "view"
                    and "\ufffd" in (before or b"").decode()):
                return FileEditorObservation.from_text(text=NOT_UTF8.format(path=posixpath.normpath(action.path)),
                                                       command=action.command, is_error=True)
            local = self.local(action.path)
            observation = self.editor(action.model_copy(update={"path": str(local)}), conversation)
            if action.command != "view" and local.is_file() and not local.is_symlink():
                after = local.read_bytes()
                if after != before:
                    self._write(posixpath.normpath(action.path), after)
            return self._unstage(observation)

    def _write(self, path: str, data: bytes) -> None:
        try:
            self.executor.write_file(path, data.decode("utf-8"))
        except UnicodeDecodeError:  # kept in its own encoding (a sandbox's write_file takes bytes)
            self.executor.write_file(path, data)  # type: ignore[arg-type]

    def close(self) -> None:
        """Remove the staging directory and OpenHands' edit history; forget the episode."""
        shutil.rmtree(self.stage, ignore_errors=True)
        history = getattr(getattr(self.editor.editor, "_history_manager", None), "cache", None)
        if history is not None:
            shutil.rmtree(history.directory, ignore_errors=True)
        if self._on_close is not None:
            self._on_close()


class SweworldFileEditorTool(FileEditorTool):
    """OpenHands' ``file_editor`` tool (same name, schema and description) over a sweworld episode's
    files; registered as ``sweworld_file_editor`` (``Tool(name="sweworld_file_editor",
    params={"episode": KEY})``)."""

    name: ClassVar[str] = "file_editor"
    catalog_description: ClassVar[str] = "View, create and edit files of a sweworld episode."

    def declared_resources(self, action: Action) -> DeclaredResources:
        # one staging directory per episode: every call of this tool takes the same lock (no host path resolved)
        return DeclaredResources(keys=(f"sweworld-editor:{id(self.executor)}",), declared=True)

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, episode: str = "",  # type: ignore[override]
               **_: Any) -> Sequence[SweworldFileEditorTool]:
        executor = EpisodeFileEditorExecutor(attached(episode), on_close=lambda: release(episode))
        lines = TOOL_DESCRIPTION.split("\n")
        description = TOOL_DESCRIPTION
        if conv_state is not None and conv_state.agent.llm.vision_is_active():
            description = "\n".join([*lines[:2], "* If `path` is an image file (.png, .jpg, .jpeg, .gif, .webp, "
                                     ".bmp), `view` displays the image content", *lines[2:]])
        description += (f"\n\nYour current working directory is: {executor.workdir}\nWhen exploring project "
                        "structure, start with this directory instead of the root filesystem.")
        return [cls(action_type=FileEditorAction, observation_type=FileEditorObservation, description=description,
                    annotations=ToolAnnotations(title="file_editor", readOnlyHint=False, destructiveHint=True,
                                                idempotentHint=False, openWorldHint=False),
                    executor=executor)]


__all__ = ["NOT_UTF8", "EpisodeFileEditorExecutor", "SweworldFileEditorTool"]
