"""scripts/gpu-summary's sections (see its docstring)."""
