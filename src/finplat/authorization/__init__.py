"""Authorization rules: a company's own conditions on its cards' purchases, evaluated in the
real-time decision, and the BIN ranges they are scoped to."""
