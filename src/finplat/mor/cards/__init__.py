"""Cards for a MOR merchant's people: cardholders, batches, assignment, load requests."""
