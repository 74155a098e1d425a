"""Companies: the tenants that own everything else."""
