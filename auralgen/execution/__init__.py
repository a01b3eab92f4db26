"""How work runs: executors that map a function over work units and yield results in input order."""

from auralgen.execution.base import Executor
from auralgen.execution.local import LocalPoolExecutor, make_executor
from auralgen.execution.serial import SerialExecutor

__all__ = ["Executor", "LocalPoolExecutor", "SerialExecutor", "make_executor"]
