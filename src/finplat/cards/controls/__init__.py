"""A card's controls: freeze, enable, activation, PIN and auto-lock, each applied at the
provider and taken back in the order the provider answered."""
