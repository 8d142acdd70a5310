"""The rule registry's rows, one data module per profile area, in the order the reference lists
them; :mod:`gpustack.profile.rules.registry` joins them into its ``RULES``."""
