"""Gold builder for evals/heldout-ward.jsonl: reads raw FHIR JSON only, imports nothing from fhirqa."""
