"""benchtui engine: everything that is not a screen. Never imports textual."""
__version__ = "0.2.0"
