"""Pure records and registries: findings, rules, families, the draft config, the report."""
