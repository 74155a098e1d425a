"""The MOR merchant's transaction listing: its wallet's movements and its cards' purchases."""
