"""Banking-provider onboarding of personal users: application, documents, information."""
