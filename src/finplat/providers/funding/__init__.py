"""The funding rail: confirms money a company sends in to its master account."""
