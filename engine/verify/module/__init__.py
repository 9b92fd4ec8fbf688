"""PyTorch-module answers (kernel decks): the host in the answer's process, the checker's suite, its rules, tensors, seeds and timing."""
