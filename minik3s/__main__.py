"""`python -m minik3s` == the `minik3s` console script."""

import sys

from minik3s.cli import main

sys.exit(main())
