"""The sandbox switch provider: its adapter (the links it opens are kept as the card sandbox's
holder accounts, `finplat.providers.cards.sandbox.holder_accounts`)."""
