"""Runs and audits as Ray tasks, and the private network a local Ray instance runs in."""
