"""The runtime contracts as data, their pure evaluator, and runtime selectors."""
