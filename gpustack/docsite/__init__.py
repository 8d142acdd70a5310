"""The documentation site's reference pages and the README's API access table, rendered from
the code (``python -m gpustack.docsite``; ``--check`` fails naming the first stale file).

Why generated: a reference page restates facts declared once elsewhere (a profile field, a rule,
a doctor check, a command's options, a component's RBAC rules); rendering it from those
declarations means the page cannot describe what does not exist or miss what does.
"""
