"""Card provider to banking provider: `cardprov-to-bankprov` (issue 33, item 4)."""
