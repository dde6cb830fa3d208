"""Figures, written as PNG and SVG next to the numbers they show."""
