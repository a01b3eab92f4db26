"""Model adapters, one module per ``model.kind`` (see :mod:`.base`)."""

from .base import (
    ADAPTERS,
    Adapter,
    BaseConfig,
    FatalModelError,
    ModelError,
    build_adapter,
    check_model_config,
    register,
    strip_answer,
)

__all__ = [
    "ADAPTERS",
    "Adapter",
    "BaseConfig",
    "FatalModelError",
    "ModelError",
    "build_adapter",
    "check_model_config",
    "register",
    "strip_answer",
]
