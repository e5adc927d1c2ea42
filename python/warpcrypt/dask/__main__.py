"""`python -m warpcrypt.dask`: the `warpcrypt-dask` command."""

import sys

from warpcrypt.dask._cli import main

# The guard matters: a local cluster's worker processes start by importing
# the main module again.
if __name__ == "__main__":
    sys.exit(main())
