"""Developer tools that sit on top of the compiler: ``python -m tilec.tools.fuzz`` (differential fuzzing)."""
