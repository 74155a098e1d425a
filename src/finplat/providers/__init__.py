"""Provider names and types shared by every domain that talks about providers."""
