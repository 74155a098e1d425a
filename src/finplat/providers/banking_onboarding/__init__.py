"""The banking provider's account onboarding: applications, documents, information requests."""
