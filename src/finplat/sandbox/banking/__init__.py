"""The sandbox banking simulations: incoming credits to a budget, payouts and payment batches
moved on."""
