"""The ``Pass`` base and the registry of passes by name.

Apart from ``manager.py`` (which runs passes) so that every pass module can subclass ``Pass`` while the manager
imports the pass modules it names in ``tir_pipeline``: the pass modules depend on this module, the manager on
them, and nothing here on either.

Passes of a higher layer (the GPU passes) register a *pass package* here (:func:`register_pass_package`): its
modules are imported, registering their passes, the first time a name is looked up that no loaded pass has, or
when every pass is listed. The tir passes never name such a package themselves.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import ClassVar

PASS_REGISTRY: dict[str, type["Pass"]] = {}


class Pass:
    """A transformation of a whole module. Subclasses set ``name`` (registering the class) and implement
    ``run``; ``run`` may return False to report that it changed nothing (None means "unknown")."""

    name: ClassVar[str] = "<pass>"
    # One line for pass listings; when empty, the first sentence of the pass's module docstring stands in.
    summary: ClassVar[str] = ""
    #: the compile's options (a backend's ``tilec.targets.options.Options``), handed over by the PassManager that
    #: runs the pass; None for a pass run by itself
    options = None

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "name" in cls.__dict__:
            PASS_REGISTRY[cls.name] = cls

    def run(self, module) -> bool | None:
        raise NotImplementedError

    def __repr__(self):
        return f"<pass {self.name}>"


#: packages whose modules register further passes when imported: {package name: title in pass listings}
PASS_PACKAGES: dict[str, str] = {}


def register_pass_package(package: str, title: str) -> None:
    """Let the passes of ``package`` (a module name) be found by name; ``title`` heads them in listings."""
    PASS_PACKAGES[package] = title


def load_pass_packages() -> None:
    """Import every module of the registered pass packages; a module that fails to import raises its own
    error."""
    for pkg_name in list(PASS_PACKAGES):
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.iter_modules(pkg.__path__):
            mod = f"{pkg.__name__}.{info.name}"
            try:
                importlib.import_module(mod)
            except Exception as e:
                raise ImportError(f"pass module {mod} failed to import: {type(e).__name__}: {e}") from e


def package_title(module: str) -> str | None:
    """The title of the registered pass package that ``module`` belongs to, or None."""
    for pkg, title in PASS_PACKAGES.items():
        if module == pkg or module.startswith(pkg + "."):
            return title
    return None
