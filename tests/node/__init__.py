"""Node truth without a node: fake host roots per distribution, a fake of NVIDIA's toolkit
installer, and each distribution's own config regeneration (see ``hostroot``, ``installer``)."""
