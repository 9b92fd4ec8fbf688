"""What rooms hand each other and the store keeps, on the ground floor so every room may read it:
verdict names and the worst-of rule, the kinds of scan records, a run's stored coverage."""
