"""The lint rules, one per module; :mod:`gpustack.lint.registry` lists them with their IDs.

Each module has one ``check(site, ctx)`` that yields :class:`~gpustack.profile.finding.Finding`
objects with JSON paths relative to the object; the registry stamps the rule's ID on them and
the checker turns paths into ``file:line:col``.
"""
