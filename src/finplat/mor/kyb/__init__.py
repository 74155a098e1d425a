"""The MOR merchant's own KYB, submitted through the banking provider's business onboarding."""
