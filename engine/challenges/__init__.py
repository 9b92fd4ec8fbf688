"""The challenge plugins as the engine reads them: definitions (challenge.toml), the set a
workbench knows, prompt versions, requirements coverage, adapters."""
