"""Parent company provisioning: a MOR company creates child companies, each a tenant of its
own, and funds them from its wallet."""
