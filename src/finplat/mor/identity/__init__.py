"""A MOR merchant's simple users: their credentials, bearer tokens and self-service reads."""
