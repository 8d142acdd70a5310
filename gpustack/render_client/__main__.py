"""``python3 -P -m gpustack.render_client``: the Argo CD plugin's ``generate`` command.

A module of its own (not a subcommand of :mod:`gpustack.gitops.argocd_plugin` or of the CLI) so
a call imports only the client's few standard modules before it asks the renderer: Argo CD
pays this start for every Application it renders. ``-P`` keeps the Application's source
folder, the working directory, off ``sys.path``: a repository's own ``gpustack/`` folder is
never imported.
"""

import os
import sys

from gpustack import __version__
from gpustack.render_client.client import main

if __name__ == "__main__":
    sys.exit(main(__version__, os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
