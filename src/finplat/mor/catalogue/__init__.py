"""What a MOR merchant can issue: its tiers and each tier's card products."""
