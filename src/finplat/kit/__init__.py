"""Small domain-neutral building blocks: time, pagination, schemas."""
