"""Profiles: load (YAML, extends), validate (schema + rules) and the typed, defaulted model.

Pure Python: nothing under this package may import cdk8s or start Node.
"""
