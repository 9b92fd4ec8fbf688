"""This machine: its compute backends, `benchtui doctor`, the user's config file, where benchtui's
own files and the user data folder are."""
