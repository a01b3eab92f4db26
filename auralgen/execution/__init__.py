"""How work runs: executors that map a function over work units and yield results in input order."""

from auralgen.execution.local import Executor, LocalPoolExecutor, SerialExecutor, make_executor

__all__ = ["Executor", "LocalPoolExecutor", "SerialExecutor", "make_executor"]
