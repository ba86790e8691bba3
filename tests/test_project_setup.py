"""The project's own set-up: the README's two commands (an editable install with the test extras, then the test
suite), CI running exactly that test command, deterministic property tests, and the debugger promise: a
breakpoint placed in a pass file of the checkout is hit by a kernel compiled after the README's commands."""
import os
import re
import subprocess
import sys
import sysconfig
import textwrap

import hypothesis
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _readme_commands():
    text = open(os.path.join(ROOT, "README.md")).read()
    block = re.search(r"```bash\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.strip().splitlines()]


def test_the_readme_starts_with_the_two_set_up_commands():
    install, test = _readme_commands()
    assert install.startswith('pip install -e ".[test]"')  # editable: the checkout is what Python imports
    assert test == "python -m pytest -q tests"


def test_ci_runs_exactly_the_readme_commands():
    install, test = _readme_commands()
    ci = open(os.path.join(ROOT, ".ci", "run")).read().splitlines()
    runs = [line.strip() for line in ci if line.strip() and not line.lstrip().startswith("#")]
    assert test in runs  # the test command, verbatim
    assert any(line.startswith('pip install') and '-e ".[test]"' in line for line in runs)


def test_property_tests_are_deterministic():
    """CI draws the same examples on every run and keeps no example database between runs."""
    if os.environ.get("TILEC_HYPOTHESIS_PROFILE", "tilec") != "tilec":
        pytest.skip("another hypothesis profile was chosen")
    s = hypothesis.settings.default
    assert s.derandomize and s.database is None


def _imported_tilec(env, cwd):
    r = subprocess.run([sys.executable, "-c", "import tilec, os; print(os.path.dirname(tilec.__file__))"],
                       env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    return r.stdout.strip() if r.returncode == 0 else None


def test_a_breakpoint_in_a_pass_file_of_the_checkout_is_hit(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONBREAKPOINT")}
    env["TILEC_ALWAYS_COMPILE"] = "1"
    where = _imported_tilec(env, tmp_path)  # what Python imports outside the checkout, as a user's script does
    if where is None:
        pytest.skip("tilec is not installed (the README's first command installs it)")
    here = os.path.join(ROOT, "tilec")
    if os.path.realpath(where) != os.path.realpath(here):
        site = sysconfig.get_paths()["purelib"]
        assert not os.path.realpath(where).startswith(os.path.realpath(site)), (
            f"tilec is imported from a copy in {where}, not from the checkout: a breakpoint in the checkout's "
            "passes would never fire (install it editable: pip install -e \".[test]\")")
        pytest.skip(f"tilec is installed from another checkout ({where})")
    cse = os.path.join(here, "passes", "cse.py")
    line = next(i for i, text in enumerate(open(cse), 1) if text.strip().startswith("def run(")) + 1
    script = tmp_path / "k.py"
    script.write_text(textwrap.dedent("""
        import numpy as np, tilec, tilec.language as tl

        @tilec.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs) * 2.0)

        k[(1,)](np.ones(16, np.float32), BLOCK=16)
    """))
    commands = f"b {cse}:{line}\nc\np 'hit:' + self.name\nq\n"
    r = subprocess.run([sys.executable, "-m", "pdb", str(script)], input=commands, env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert "'hit:cse'" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
