"""Physical cards: production and mailing fee quotes, and shipping a card that waits for it."""
