"""python -m fsbench."""

from fsbench.cli import main

main()
