"""pytest-itbench: ITBench as a pytest plugin."""

__version__ = "0.1.0.dev0"
