"""The judge run from benchtui: an LLM, reached through the ``llm`` library,
grades answers against a rubric file (``benchtui judge``)."""
