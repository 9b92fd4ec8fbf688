"""Other benchmarks' decks (KernelBench, KernelBench-Hard) read and imported
into a workbench: problems become challenges, runs answers, and the deck's
published results and annotations rows of the store (docs/decks.md)."""
