"""This machine: its compute backends, the user's config file, where benchtui's own files and the
user data folder are."""
