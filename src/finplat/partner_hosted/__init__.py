"""Partner-hosted balances (dual balance): a company whose users' money is kept at the partner."""
