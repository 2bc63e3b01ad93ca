"""``python -m fhirqa.synth``."""

from .cli import main

raise SystemExit(main())
