"""Card analytics for the MOR merchant: spend by period, by merchant category, by cardholder."""
