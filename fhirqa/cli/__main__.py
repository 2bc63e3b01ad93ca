"""``python -m fhirqa.cli`` runs the command line."""

import sys

from fhirqa.cli import main

sys.exit(main())
