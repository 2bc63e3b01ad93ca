"""Gold answers for `heldout-voices.jsonl`, read from raw Synthea bundles (no fhirqa import)."""
