"""The app's widgets, one module per visual block."""
