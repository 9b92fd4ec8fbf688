"""What is on disk: finding a workbench and its two layouts, scanning it into the store, its files
(main source, git state), new model folders."""
