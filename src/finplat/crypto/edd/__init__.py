"""Enhanced due diligence for crypto flows: the source-of-funds answers, stored with the
identity verification provider; crypto flows above a threshold require them."""
