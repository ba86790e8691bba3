"""tilec's own exceptions. Errors about kernel source name file:line:col and show the line with a caret."""
from __future__ import annotations

import os


class TilecError(Exception):
    """Base of tilec's errors."""


class CompilationError(TilecError):
    """A kernel could not be compiled; ``str()`` shows where, with the source line and a caret."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None, col: int | None = None,
                 source_line: str | None = None):
        self.message, self.file, self.line, self.col, self.source_line = message, file, line, col, source_line
        self.error_message = message  # Triton's attribute name for the same text
        super().__init__(self._format())

    #: the error a language rule raised (``ValueError("invalid axis 3")``, ...), kept by :func:`for_user` when it
    #: cuts the chain: programs written for Triton read it as ``e.__cause__``
    reason: BaseException | None = None

    @property
    def __cause__(self):
        """The chained cause, or once :func:`for_user` has cut the chain, the bare ``reason``. Python's own
        traceback display reads the chain beneath this attribute, so the message a user sees stays short."""
        own = BaseException.__cause__.__get__(self)
        return own if own is not None else self.reason

    @__cause__.setter
    def __cause__(self, value):
        BaseException.__cause__.__set__(self, value)

    def _format(self) -> str:
        if self.file is None:
            return self.message
        head = f"{self.file}:{self.line}:{self.col}: {self.message}"
        if self.source_line is None:
            return head
        text = self.source_line.rstrip("\n")
        caret = " " * max(0, self.col - 1) + "^"
        return f"{head}\n    {text}\n    {caret}"


class BackendError(TilecError):
    """A backend tool (LLVM, the driver JIT, ptxas) rejected what tilec produced: a tilec bug or a limit."""


class LaunchError(TilecError):
    """A launch failed (bad grid, out of resources, driver error)."""


class ArgumentError(LaunchError, ValueError):
    """A launch argument the kernel cannot take: host memory the device cannot reach, a value that does not fit its
    parameter, the wrong number of arguments (a ``ValueError`` too, as Triton raises for these)."""


class OutOfResources(CompilationError, LaunchError):
    """A kernel needs more of a per-block resource than its target has (shared memory, LDS). Raised at compile
    time, located at the kernel line of the largest user, naming what is needed and what is allowed; also a
    ``LaunchError``, which Triton-style code catches as ``OutOfResources``. ``required``, ``limit`` and ``name``
    as Triton's exception has them."""

    def __init__(self, message: str, required: int, limit: int, name: str, file=None, line=None, col=None,
                 source_line=None):
        self.required, self.limit, self.name = required, limit, name
        super().__init__(message, file, line, col, source_line)


class KernelFault(LaunchError):
    """A kernel faulted on the device (illegal or misaligned address, illegal instruction, ...). Faults surface at
    the next driver call after the faulting kernel, and leave the device's context unusable for the rest of the
    process (CUDA errors of this kind are sticky): the message names the kernel tilec can attribute it to."""


class ConfigurationError(TilecError, ValueError):
    """An environment variable or option names something that does not exist (a pass, a kernel, a GPU
    architecture); the message lists what does, with the closest match first."""


def did_you_mean(word: str, choices) -> str:
    """`` (did you mean 'x'?)`` for the choice closest to ``word``, or nothing when none is close."""
    import difflib
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class BoundsError(TilecError, IndexError):
    """Debug builds: a load, store or atomic reached outside the array its pointer came from. Names the kernel
    line, the program, the offending offset and the array's size; the access itself was suppressed."""


class DeviceAssertionError(TilecError, AssertionError):
    """Debug builds: a ``tl.device_assert`` failed in compiled code (the message, file:line and program)."""


def located(file, line, col, message: str) -> str:
    """``file:line:col: message`` followed by the source line and a caret, as compile errors show them."""
    if file is None:
        return message
    import linecache
    head = f"{file}:{line}:{col}: {message}"
    text = linecache.getline(file, line or 0).rstrip("\n")
    if not text:
        return head
    return f"{head}\n    {text}\n    {' ' * max(0, (col or 1) - 1)}^"


def at_op(op, message: str) -> CompilationError:
    """A compile error at ``op``'s kernel line (its ``loc``), for a backend refusing what the kernel asks of it:
    the user sees the line, not the backend."""
    loc = op.loc
    if loc is None:
        return CompilationError(message)
    import linecache
    return CompilationError(message, loc.file, loc.line, loc.col, linecache.getline(loc.file, loc.line) or None)


def for_user(e: BaseException) -> BaseException:
    """``e`` ready to reach the user: its internal traceback and chained internal exceptions dropped, so the
    located message follows the user's own launch line directly (``TILEC_DEBUG=1`` keeps everything). A
    compilation error keeps the error that started it, bare, as its ``reason`` (read as ``__cause__``)."""
    if os.environ.get("TILEC_DEBUG", "0") in ("", "0"):
        if isinstance(e, CompilationError) and e.__cause__ is not None:
            root = e.__cause__
            while isinstance(root, CompilationError) and root.__cause__ is not None:
                root = root.__cause__
            root.__traceback__ = None
            root.__cause__ = root.__context__ = None
            e.reason = root
        e.__traceback__ = None
        e.__cause__ = None
        e.__suppress_context__ = True
    return e
