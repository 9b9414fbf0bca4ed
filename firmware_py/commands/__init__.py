"""One module per command of the ``patchwork-companion`` command line, thin over the rest."""
