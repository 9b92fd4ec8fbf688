"""Text fitted to a width: the CLI's check messages and the dashboard's table cells, cut or wrapped by one rule."""
