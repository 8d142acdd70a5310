"""gpustack's operands held to NVIDIA's own rendering (GPU Operator v26.7.0): the facts, the
intended divergences, their checks, and the site page rendered from them."""
