"""A batch of compile jobs in a folder, as the tuning process (``compile_ahead.py``) and its worker processes
(``compile_worker.py``) both read it: the pickled job list in ``FOLDER/jobs``, and a claim file per job, so that
each job is compiled once, by whichever process claims it first.

Its own module because both sides need it and the tuning process starts the workers by module name only: the
worker module (which imports the launch path to find kernels) is never imported into the tuning process.
"""
from __future__ import annotations

import os
import pickle

JOBS = "jobs"


def write_jobs(folder: str, jobs: list) -> None:
    with open(os.path.join(folder, JOBS), "wb") as f:
        pickle.dump(jobs, f)


def read_jobs(folder: str) -> list:
    with open(os.path.join(folder, JOBS), "rb") as f:
        return pickle.load(f)


def claim(folder: str, i: int) -> bool:
    """Take job ``i`` of the batch in ``folder`` (each job is compiled by whichever process claims it first)."""
    try:
        os.close(os.open(os.path.join(folder, f"claim-{i}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        return True
    except FileExistsError:
        return False
