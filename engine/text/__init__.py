"""Text fitted to a width (the CLI's check messages and the dashboard's table cells, cut or wrapped
by one rule) and the one size cap on text every command and screen states in the same words."""
