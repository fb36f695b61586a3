"""The analysis stage: read a source once, derive every fact, findings and verdicts."""
